package nativeeval

import (
	"math"
	"routebench/model/native"
	"slices"
)

// Far-mass and entropy diagnostics. They need the normalised weights
// alpha_ij = exp(s_ij - m_i) / l_i, known only after the streaming pass has
// seen every key; so a second streaming pass recomputes each score block
// with the final m_i and l_i (twice the attention cost, still O(L x d)
// memory) and only when Options.FarDistances asks for it.

// headDiag collects one head's per-query values for one layer.
type headDiag struct {
	dists []int
	far   [][]float32 // [len(dists)][L]: mass on sources j with i - j > dists[k]
	ent   []float32   // [L]: entropy of alpha_i. (nats)
}

type layerDiag struct{ heads []headDiag }

func newLayerDiag(H, L int, dists []int) *layerDiag {
	ld := &layerDiag{heads: make([]headDiag, H)}
	for h := range ld.heads {
		hd := &ld.heads[h]
		hd.dists = dists
		hd.ent = make([]float32, L)
		hd.far = make([][]float32, len(dists))
		for k := range hd.far {
			hd.far[k] = make([]float32, L)
		}
	}
	return ld
}

// diagnose is the second pass for query rows [i0, i0+nq) of head h, using
// the final w.m and w.l of the first pass.
func (b *headBufs) diagnose(s *attnShape, w *attnScratch, h, i0, nq int) {
	ent := make([]float64, nq)
	far := make([]float64, nq*len(w.stats.dists))
	last := (i0 + nq - 1) / blockK
	for kb := 0; kb <= last; kb++ {
		b.scores(s, w, h, i0, nq, kb)
		diagBlock(w, w.stats, i0, nq, kb*blockK, ent, far)
	}
	finishDiag(w, w.stats, i0, nq, ent, far)
}

// diagBlock adds one score block's terms (keys from j0, scores in w.sc,
// destroyed) to the entropy and far-mass sums of rows [i0, i0+nq).
func diagBlock(w *attnScratch, st *headDiag, i0, nq, j0 int, ent, far []float64) {
	nd := len(st.dists)
	for r := 0; r < nq; r++ {
		i := i0 + r
		nj := min(blockK, i-j0+1) // unmasked keys of this row
		if nj <= 0 {
			continue
		}
		row := w.sc[r*blockK : (r+1)*blockK]
		copy(w.pre, row)
		inv := 1 / float64(w.l[r])
		blockMass := float64(native.ExpShift(row, w.m[r])) * inv
		ent[r] += entropyTerms(row[:nj], w.pre[:nj], w.m[r]) * inv
		for k, D := range st.dists {
			// far sources: j0+j < i-D, a prefix of the block; only
			// the block holding the boundary needs a partial sum
			switch cut := i - D - j0; {
			case cut >= nj:
				far[r*nd+k] += blockMass
			case cut > 0:
				var m float32
				for _, p := range row[:cut] {
					m += p
				}
				far[r*nd+k] += float64(m) * inv
			}
		}
	}
}

// finishDiag stores the sums of rows [i0, i0+nq) as entropies and masses.
func finishDiag(w *attnScratch, st *headDiag, i0, nq int, ent, far []float64) {
	nd := len(st.dists)
	for r := 0; r < nq; r++ {
		st.ent[i0+r] = float32(math.Log(float64(w.l[r])) - ent[r])
		for k := range st.dists {
			st.far[k][i0+r] = float32(far[r*nd+k])
		}
	}
}

// entropyTerms is sum_j e_j (s_j - m) over one block row, with
// e_j = exp(s_j - m): four float32 accumulators (64 terms at most, each
// rounding adds ~eps relative to the sum of magnitudes).
func entropyTerms(e, s []float32, m float32) float64 {
	var a0, a1, a2, a3 float32
	j := 0
	for ; j+4 <= len(e); j += 4 {
		a0 += e[j] * (s[j] - m)
		a1 += e[j+1] * (s[j+1] - m)
		a2 += e[j+2] * (s[j+2] - m)
		a3 += e[j+3] * (s[j+3] - m)
	}
	for ; j < len(e); j++ {
		a0 += e[j] * (s[j] - m)
	}
	return float64(a0 + a1 + a2 + a3)
}

// QuantileProbs are the probabilities at which Dist.Quantiles is reported.
var QuantileProbs = []float64{0.05, 0.25, 0.5, 0.75, 0.95}

// Dist summarises a per-query quantity over the queries of a window.
type Dist struct {
	N         int       // queries summarised
	Mean      float64   //
	Min, Max  float64   //
	Quantiles []float64 // at QuantileProbs (nearest rank)
}

func summarize(x []float32) Dist {
	if len(x) == 0 {
		return Dist{}
	}
	v := make([]float64, len(x))
	var sum float64
	for i, a := range x {
		v[i] = float64(a)
		sum += v[i]
	}
	slices.Sort(v)
	d := Dist{N: len(v), Mean: sum / float64(len(v)), Min: v[0], Max: v[len(v)-1]}
	for _, p := range QuantileProbs {
		k := int(math.Ceil(p*float64(len(v)))) - 1
		d.Quantiles = append(d.Quantiles, v[max(0, min(len(v)-1, k))])
	}
	return d
}

// FarMass is the attention mass on sources farther than Distance tokens
// (i - j > Distance), over the queries that have such sources (i > Distance).
type FarMass struct {
	Distance int
	Dist
}

// HeadStats are one head's diagnostics for one window.
type HeadStats struct {
	Layer, Head int
	Far         []FarMass // one per Options.FarDistances, same order
	Entropy     Dist      // attention entropy in nats, over all queries
}

func (ld *layerDiag) summarize(layer int) []HeadStats {
	out := make([]HeadStats, len(ld.heads))
	for h, hd := range ld.heads {
		hs := HeadStats{Layer: layer, Head: h, Entropy: summarize(hd.ent)}
		for k, D := range hd.dists {
			from := min(len(hd.far[k]), max(0, D+1))
			hs.Far = append(hs.Far, FarMass{Distance: D, Dist: summarize(hd.far[k][from:])})
		}
		out[h] = hs
	}
	return out
}

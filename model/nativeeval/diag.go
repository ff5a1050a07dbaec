package nativeeval

import (
	"math"
	"slices"

	"routebench/model/native"
)

// Far-mass and entropy diagnostics, in the same streaming pass as the
// output. The normalised weights alpha_ij = exp(s_ij - m_i) / l_i need the
// final row max m_i and sum l_i, but the sums they enter rescale like l
// itself: with e_j = exp(s_j - m) under the running max m,
//
//	E = sum_j e_j (s_j - m)  (entropy = log l - E / l),
//	F = sum_{j far} e_j      (far mass = F / l),
//
// and a new max m' turns E into f (E + (m - m') l) and F into f F, with
// f = exp(m - m') the factor that rescales l. So each score block adds its
// terms and rescales the earlier ones, and nothing is recomputed (a
// second streaming pass that recomputed every score block cost about as
// much as the output itself). A block's share of E comes out of the
// softmax kernel itself (native.OnlineSoftmaxEntropy64), which has s_j and
// e_j in registers: a copy of the score block and a scalar pass over it
// cost ~16% of a diagnostic forward at L = 4,096.

// diagBroken names a piece that tests break on purpose ("rescale": the
// earlier blocks' sums are not rescaled by a new max) to prove that the
// reference comparison can fail; empty in every real run.
var diagBroken string

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

// diagState is one work item's running diagnostic sums (float64), the
// block's state before its softmax step and the block's E terms.
type diagState struct {
	ent, far []float64 // [rows], [rows][len(dists)]: E and F under the running max
	be       []float32 // [rows]: this block's sum_j e_j (s_j - m_new)
	m0, l0   []float32 // the rows' max and sum before the block
}

func newDiagState(rows, nd int) *diagState {
	return &diagState{ent: make([]float64, rows), far: make([]float64, rows*nd), be: make([]float32, rows),
		m0: make([]float32, rows), l0: make([]float32, rows)}
}

// softmaxStep is onlineSoftmax, plus the diagnostic sums when w.stats is
// set: the score block (keys from j0, query rows [i0, i0+nq)), with the
// offsets w.offA[r] + w.offB[j] added when offB is set, becomes
// exp(s - m_new) and its terms join E and F.
func softmaxStep(w *attnScratch, i0, nq, j0 int) {
	st := w.stats
	if st == nil {
		onlineSoftmax(w, nq)
		return
	}
	ds, nd := w.diag, len(st.dists)
	copy(ds.m0[:nq], w.m[:nq])
	copy(ds.l0[:nq], w.l[:nq])
	if w.offB != nil {
		native.OnlineSoftmaxEntropyOffsets64(w.sc, nq, w.offA, w.offB, w.m, w.l, w.f, w.rs, ds.be)
	} else {
		native.OnlineSoftmaxEntropy64(w.sc, nq, w.m, w.l, w.f, w.rs, ds.be)
	}
	for r := 0; r < nq; r++ {
		i := i0 + r
		nj := min(blockK, i-j0+1) // unmasked keys of this row
		if nj <= 0 {
			continue // no keys here: the row's max, and so its sums, stay
		}
		if ds.l0[r] > 0 && diagBroken != "rescale" {
			f := float64(w.f[r])
			ds.ent[r] = f * (ds.ent[r] + float64(ds.m0[r]-w.m[r])*float64(ds.l0[r]))
			for k := 0; k < nd; k++ {
				ds.far[r*nd+k] *= f
			}
		}
		row := w.sc[r*blockK : (r+1)*blockK]
		ds.ent[r] += float64(ds.be[r])
		for k, D := range st.dists {
			// far sources: j0+j < i-D, a prefix of the block; only
			// the block holding the boundary needs a partial sum
			switch cut := i - D - j0; {
			case cut >= nj:
				ds.far[r*nd+k] += float64(w.rs[r])
			case cut > 0:
				var m float32
				for _, p := range row[:cut] {
					m += p
				}
				ds.far[r*nd+k] += float64(m)
			}
		}
	}
}

// startDiag clears the sums of a work item's nq rows.
func startDiag(w *attnScratch, nq int) {
	if w.stats == nil {
		return
	}
	if w.diag == nil || len(w.diag.far) < len(w.m)*len(w.stats.dists) {
		w.diag = newDiagState(len(w.m), len(w.stats.dists))
	}
	clear(w.diag.ent[:nq])
	clear(w.diag.far[:nq*len(w.stats.dists)])
}

// finishDiag stores the sums of rows [i0, i0+nq) as entropies and masses.
func finishDiag(w *attnScratch, i0, nq int) {
	st, ds := w.stats, w.diag
	if st == nil {
		return
	}
	nd := len(st.dists)
	for r := 0; r < nq; r++ {
		l := float64(w.l[r])
		st.ent[i0+r] = float32(math.Log(l) - ds.ent[r]/l)
		for k := range st.dists {
			st.far[k][i0+r] = float32(ds.far[r*nd+k] / l)
		}
	}
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

// summarize is the layer's statistics over queries [0, upto).
func (ld *layerDiag) summarize(layer, upto int) []HeadStats {
	out := make([]HeadStats, len(ld.heads))
	for h, hd := range ld.heads {
		hs := HeadStats{Layer: layer, Head: h, Entropy: summarize(hd.ent[:upto])}
		for k, D := range hd.dists {
			from := min(upto, max(0, D+1))
			hs.Far = append(hs.Far, FarMass{Distance: D, Dist: summarize(hd.far[k][from:upto])})
		}
		out[h] = hs
	}
	return out
}

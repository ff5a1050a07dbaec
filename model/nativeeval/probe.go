package nativeeval

import (
	"fmt"
	"math"
	"math/bits"

	"routebench/model/native"
)

// The mechanism probe (issue 39; docs/statistics.md, claims v4m): for a
// few query positions, each layer's and head's exact attention row over
// every source, from the pass's own head buffers (the rotated and scaled
// queries and keys, the transported values, ALiBi's slopes, KERPLE's
// bias table, PaTH's steps
// and FoX's gate), summarised by log2-distance bin. The row is recomputed
// in float64 for the listed queries only (O(L d) each, not O(L^2)), and
// its output sum_j a_j v_j is compared with the streaming attention's own
// output at that query: a row that disagrees is not the model's, and the
// caller refuses it (ProbeRow.OutErr).

// probeBroken names a piece that tests break on purpose ("bin": distances
// one bin off; "bound": the bound's exponent with the wrong sign) to
// prove that the reference comparisons can fail; empty in every real run.
var probeBroken string

// ProbeBins is the number of log2-distance bins for a window of L
// positions: bin 0 holds distance 0, bin k >= 1 distances [2^(k-1), 2^k).
func ProbeBins(L int) int { return bits.Len(uint(max(L-1, 0))) + 1 }

// ProbeBin returns the bin of a distance delta >= 0.
func ProbeBin(delta int) int {
	b := bits.Len(uint(delta))
	if probeBroken == "bin" && b > 1 {
		b--
	}
	return b
}

// ProbeBinStats are one bin's figures for one query row.
type ProbeBinStats struct {
	Sources int     `json:"sources"` // sources in the bin (0: the query sees none this far)
	Mass    float64 `json:"mass"`    // sum of the attention weights
	// LogitMean and LogitSD are over the bin's sources (unweighted), the
	// logits as the softmax sees them (scaled, with bias or gate).
	LogitMean float64 `json:"logit_mean"`
	LogitSD   float64 `json:"logit_sd"`
	// Coherence is ||sum_j a_j v_j|| / sum_j a_j ||v_j|| over the bin
	// (values as the attention uses them: transported for value
	// transport); 0 when the bin's mass is 0.
	Coherence float64 `json:"coherence"`
}

// ProbeRow is one (layer, head, query) row of the probe.
type ProbeRow struct {
	Layer, Head, Query int
	Bins               []ProbeBinStats // ProbeBins(Query+1) bins
	// Far: sources j with Query - j > Options.ProbeFar; near the rest.
	Far, Near     int
	FarMass       float64
	FarCoherence  float64 // coherence over the far sources; 0 without far mass
	Lambda        float64 // half the row's logit range, (max - min) / 2
	Bound         float64 // Far / (Far + Near e^(2 Lambda)), the far-mass lower bound
	OutErr        float64 // max |row output - streaming output| / (max |streaming output| + 1e-6)
	Entropy       float64 // of the row, nats
	LogitMax      float64
	LogitMin      float64
	NearLogitMean float64
	FarLogitMean  float64
}

// probeLayer computes the rows of one layer from the pass's buffers after
// its attention wrote att ([L][H*d]). st is the layer's PaTH steps (nil
// for other variants).
func probeLayer(s *attnShape, bufs *headBufs, st *pathSteps, att []float32, layer int, queries []int, far int, workers int) []ProbeRow {
	H := s.H
	rows := make([]ProbeRow, H*len(queries))
	native.ParallelFor(len(rows), workers, func(t int) {
		h, qi := t%H, t/H
		rows[t] = probeRow(s, bufs, st, att, layer, h, queries[qi], far)
	})
	return rows
}

// probeRow is one query's exact row and its summary.
func probeRow(s *attnShape, bufs *headBufs, st *pathSteps, att []float32, layer, h, i, far int) ProbeRow {
	d, L, nkb, lp := s.d, s.L, s.nkb(), s.lpad()
	n := i + 1
	logit := make([]float64, n)
	q := bufs.q[(h*L+i)*d : (h*L+i+1)*d]
	// kt holds each key block transposed ([d][blockK]): a block is read
	// row-major into kr once (a key's d values are blockK floats apart
	// there, a cache line each when read key by key).
	kr := make([]float64, blockK*d)
	block := func(kb int) int {
		blk := bufs.kt[(h*nkb+kb)*d*blockK : (h*nkb+kb+1)*d*blockK]
		nk := min(blockK, n-kb*blockK)
		for c := 0; c < d; c++ {
			for jj, x := range blk[c*blockK : c*blockK+nk] {
				kr[jj*d+c] = float64(x)
			}
		}
		return nk
	}
	if st == nil {
		for kb := 0; kb*blockK < n; kb++ {
			j0, nk := kb*blockK, block(kb)
			for jj := 0; jj < nk; jj++ {
				k := kr[jj*d : (jj+1)*d]
				var acc float64
				for c, x := range k {
					acc += float64(q[c]) * x
				}
				if s.slopes != nil {
					acc += float64(s.slopes[h]) * float64(j0+jj-i)
				}
				if s.kerple != nil { // the pass's own table: bias(i-j) at L-1-(i-j)
					acc += float64(s.kerple[h*(L+blockK)+L-1-i+j0+jj])
				}
				logit[j0+jj] = acc
			}
		}
	} else {
		// PaTH: s_ij = q_i^T H_i ... H_{j+1} k_j (+ the gate): carry the
		// query back one step at a time, u <- H_{j+1} u (H symmetric),
		// newest key block first.
		u := make([]float64, d)
		for c := range u {
			u[c] = float64(q[c])
		}
		scale := 1 / math.Sqrt(float64(d))
		for kb := i / blockK; kb >= 0; kb-- {
			j0 := kb * blockK
			block(kb)
			for j := min(i, j0+blockK-1); j >= j0; j-- {
				if j < i {
					w := st.w[(h*L+j+1)*d : (h*L+j+2)*d]
					var wu float64
					for c := range u {
						wu += float64(w[c]) * u[c]
					}
					b := float64(st.beta[h*L+j+1]) * wu
					for c := range u {
						u[c] -= b * float64(w[c])
					}
				}
				k := kr[(j-j0)*d : (j-j0+1)*d]
				var acc float64
				for c, x := range k {
					acc += u[c] * x
				}
				if st.G != nil {
					acc += (st.G[h*L+i] - st.G[h*L+j]) * scale
				}
				logit[j] = acc
			}
		}
	}
	mx, mn := math.Inf(-1), math.Inf(1)
	for _, x := range logit {
		mx, mn = math.Max(mx, x), math.Min(mn, x)
	}
	a := make([]float64, n)
	var sum float64
	for j, x := range logit {
		a[j] = math.Exp(x - mx)
		sum += a[j]
	}
	nb := ProbeBins(n)
	r := ProbeRow{Layer: layer, Head: h, Query: i, Bins: make([]ProbeBinStats, nb), Lambda: (mx - mn) / 2, LogitMax: mx, LogitMin: mn}
	type acc struct {
		o           []float64
		norm, s, s2 float64
	}
	bins := make([]acc, nb)
	for b := range bins {
		bins[b].o = make([]float64, d)
	}
	farO := make([]float64, d)
	var farNorm, farLogit, nearLogit float64
	for j := 0; j < n; j++ {
		a[j] /= sum
		if a[j] > 0 {
			r.Entropy -= a[j] * math.Log(a[j])
		}
		v := bufs.v[(h*lp+j)*d : (h*lp+j+1)*d]
		var vn float64
		for _, x := range v {
			vn += float64(x) * float64(x)
		}
		vn = math.Sqrt(vn)
		delta := i - j
		bin := min(ProbeBin(delta), nb-1)
		ba := &bins[bin]
		r.Bins[bin].Sources++
		r.Bins[bin].Mass += a[j]
		ba.s += logit[j]
		ba.s2 += logit[j] * logit[j]
		ba.norm += a[j] * vn
		isFar := delta > far
		if isFar {
			r.Far++
			r.FarMass += a[j]
			farNorm += a[j] * vn
			farLogit += logit[j]
		} else {
			r.Near++
			nearLogit += logit[j]
		}
		for c, x := range v {
			ax := a[j] * float64(x)
			ba.o[c] += ax
			if isFar {
				farO[c] += ax
			}
		}
	}
	// The row's output is the sum of its bins' (each source accumulated
	// once, into its bin).
	out := make([]float64, d)
	for b := range bins {
		for c, x := range bins[b].o {
			out[c] += x
		}
	}
	for b := range r.Bins {
		bs, ba := &r.Bins[b], &bins[b]
		if bs.Sources == 0 {
			continue
		}
		k := float64(bs.Sources)
		bs.LogitMean = ba.s / k
		bs.LogitSD = math.Sqrt(math.Max(0, ba.s2/k-bs.LogitMean*bs.LogitMean))
		if ba.norm > 0 {
			bs.Coherence = norm(ba.o) / ba.norm
		}
	}
	if farNorm > 0 {
		r.FarCoherence = norm(farO) / farNorm
	}
	if r.Far > 0 {
		r.FarLogitMean = farLogit / float64(r.Far)
	}
	if r.Near > 0 {
		r.NearLogitMean = nearLogit / float64(r.Near)
	}
	r.Bound = FarBound(r.Far, r.Near, r.Lambda)
	// The streaming output at (i, h): the row's output, turned back by
	// R(-psi_i) under value transport as finishBlock does.
	o32 := make([]float32, d)
	for c, x := range out {
		o32[c] = float32(x)
	}
	if s.valueRot {
		tmp := make([]float32, d)
		native.UnrotateRows(tmp, d, o32, d, s.cs[(i*s.H+h)*d:], s.H*d, 1, d, 1)
		o32 = tmp
	}
	D := s.H * d
	got := att[i*D+h*d : i*D+h*d+d]
	var maxDiff, maxAbs float64
	for c := range got {
		maxDiff = math.Max(maxDiff, math.Abs(float64(got[c])-float64(o32[c])))
		maxAbs = math.Max(maxAbs, math.Abs(float64(got[c])))
	}
	r.OutErr = maxDiff / (maxAbs + 1e-6)
	return r
}

// FarBound is the far-mass lower bound M / (M + K e^(2 lambda)) for M far
// and K near sources whose logits all lie within a range of 2 lambda:
// each far weight is at least e^(-2 lambda) times each near one.
func FarBound(far, near int, lambda float64) float64 {
	e := 2 * lambda
	if probeBroken == "bound" {
		e = -e
	}
	if far == 0 {
		return 0
	}
	return float64(far) / (float64(far) + float64(near)*math.Exp(e))
}

func norm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// checkProbe validates Options' probe fields against a window of L.
func checkProbe(queries []int, far, L int) error {
	for k, i := range queries {
		if i < 0 || i >= L || (k > 0 && i <= queries[k-1]) {
			return fmt.Errorf("native: probe queries %v for a window of %d: want increasing positions in [0, %d)", queries, L, L)
		}
	}
	if len(queries) > 0 && far < 0 {
		return fmt.Errorf("native: probe far distance %d is negative (want T, the training context)", far)
	}
	return nil
}

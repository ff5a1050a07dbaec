package evaluate

import (
	"fmt"
	"math"

	"routebench/model/nativeeval"
)

// The measured spectral gap of a trained PaTH model's steps. The theory's
// mixing condition (PAPER.md, theory 1) is ||E[M_t]||_op < 1 for the
// per-token step; for PaTH, M_t = H_t = I - beta_t w_t w_t^T, so over the
// held-out tokens E[H_t] = I - E[beta_t w_t w_t^T], a symmetric matrix whose
// operator norm is its largest |eigenvalue|, and 1 - ||E[H_t]||_op is the
// gap, the quantity the SO(2) variants have per pair as
// 1 - exp(-sigma^2/2) (modelspec.SpectralGaps). Eigenvalues of E[H_t] lie
// in (-1, 1]: 1 wherever the directions w_t leave a subspace untouched.
//
// A bound the numbers must respect: with S = E[beta_t w_t w_t^T] (PSD,
// trace E[beta_t] < 2) and d >= 2, lambda_max(S) + lambda_min(S) <= trace
// < 2, so 1 - lambda_min(S) >= lambda_max(S) - 1: the norm is EigMax and
// the gap is lambda_min(S) <= trace / d = MeanBeta / d < 2 / d. A Householder
// step moves one direction of d, so its mean can contract every direction
// only by about 1/d; the SO(2) gap has no such 1/d.

// StepGap is one layer's and head's mean step over a length's windows.
type StepGap struct {
	Layer  int     `json:"layer"`
	Head   int     `json:"head"`
	Dim    int     `json:"dim"`     // head width d
	Tokens int     `json:"tokens"`  // positions pooled (the length's first Config.Windows windows)
	OpNorm float64 `json:"op_norm"` // ||E[H_t]||_op = max |eigenvalue|
	Gap    float64 `json:"gap"`     // 1 - OpNorm
	EigMin float64 `json:"eig_min"` // smallest eigenvalue of E[H_t]
	EigMax float64 `json:"eig_max"` // largest (1 - the weakest direction's E[beta (w.u)^2])
	// MeanBeta is trace E[beta_t w_t w_t^T] = E[beta_t |w_t|^2]: the mean
	// strength, as |w_t| = 1 up to the L2 epsilon.
	MeanBeta float64 `json:"mean_beta"`
}

// stepSums pools nativeeval step sums over windows, by (layer, head).
type stepSums struct{ sums []nativeeval.PathStepSum }

func (a *stepSums) add(ws []nativeeval.PathStepSum) error {
	if a.sums == nil {
		for _, s := range ws {
			a.sums = append(a.sums, nativeeval.PathStepSum{Layer: s.Layer, Head: s.Head, D: s.D, Sum: make([]float64, len(s.Sum))})
		}
	}
	if len(ws) != len(a.sums) {
		return fmt.Errorf("evaluate: a window returned %d step sums, an earlier one %d (one per layer and head each)", len(ws), len(a.sums))
	}
	for k, s := range ws {
		p := &a.sums[k]
		if s.Layer != p.Layer || s.Head != p.Head || len(s.Sum) != len(p.Sum) {
			return fmt.Errorf("evaluate: step sum %d is layer %d head %d (%d values), earlier windows' layer %d head %d (%d)",
				k, s.Layer, s.Head, len(s.Sum), p.Layer, p.Head, len(p.Sum))
		}
		p.Count += s.Count
		for i, x := range s.Sum {
			p.Sum[i] += x
		}
	}
	return nil
}

// gaps is the pooled mean step's spectrum per (layer, head); nil when
// nothing was pooled.
func (a *stepSums) gaps() []StepGap {
	var out []StepGap
	for _, s := range a.sums {
		out = append(out, stepGapOf(s))
	}
	return out
}

// stepGapOf reads E[H_t] = I - Sum/Count from one pooled sum.
func stepGapOf(s nativeeval.PathStepSum) StepGap {
	d, n := s.D, float64(s.Count)
	M := make([]float64, d*d)
	var tr float64
	for r := 0; r < d; r++ {
		for c := 0; c < d; c++ {
			M[r*d+c] = -s.Sum[r*d+c] / n
		}
		M[r*d+r]++
		tr += s.Sum[r*d+r] / n
	}
	ev := symEigenvalues(M, d)
	lo, hi := ev[0], ev[0]
	for _, x := range ev {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	op := math.Max(math.Abs(lo), math.Abs(hi))
	return StepGap{Layer: s.Layer, Head: s.Head, Dim: d, Tokens: s.Count, OpNorm: op, Gap: 1 - op, EigMin: lo, EigMax: hi, MeanBeta: tr}
}

// symEigenvalues returns the eigenvalues of the symmetric n x n matrix a
// (row-major; not modified), unordered, by cyclic Jacobi rotations in
// float64: each rotation zeroes one off-diagonal pair, and sweeps repeat
// until the off-diagonal mass is below 1e-15 of the matrix's (Jacobi
// converges quadratically; a d = 64 head takes ~8 sweeps). Chosen over a
// library solver to keep the evaluate stage's imports its own; tested
// against gonum's EigenSym.
func symEigenvalues(a []float64, n int) []float64 {
	m := append([]float64(nil), a...)
	var total float64
	for _, x := range m {
		total += x * x
	}
	for sweep := 0; sweep < 100; sweep++ {
		var off float64
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				off += m[p*n+q] * m[p*n+q]
			}
		}
		if off <= 1e-30*total || off == 0 {
			break
		}
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				apq := m[p*n+q]
				if apq == 0 {
					continue
				}
				// The rotation (c, s) with t = tan(angle) the smaller root
				// of t^2 + 2 theta t - 1 = 0 (Numerical Recipes' stable form).
				theta := (m[q*n+q] - m[p*n+p]) / (2 * apq)
				t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				if theta < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := 0; k < n; k++ { // columns p, q
					kp, kq := m[k*n+p], m[k*n+q]
					m[k*n+p], m[k*n+q] = c*kp-s*kq, s*kp+c*kq
				}
				for k := 0; k < n; k++ { // rows p, q
					pk, qk := m[p*n+k], m[q*n+k]
					m[p*n+k], m[q*n+k] = c*pk-s*qk, s*pk+c*qk
				}
				m[p*n+q], m[q*n+p] = 0, 0
			}
		}
	}
	ev := make([]float64, n)
	for i := range ev {
		ev[i] = m[i*n+i]
	}
	return ev
}

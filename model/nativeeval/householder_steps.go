package nativeeval

import "routebench/model/native"

// The mean Householder step. The theory's mixing condition is a spectral
// gap of the mean step, ||E[H_t]||_op < 1; for PaTH, E[H_t] = I - S / n
// with S the sum of the rank-one parts beta_t w_t w_t^T over n positions.
// The sums are returned rather than the mean so that a caller can pool
// windows (and lengths) exactly; the eigenvalues are the caller's (an
// evaluation summary, not part of the forward pass).

// PathStepSum is one layer's and head's sum of beta_t w_t w_t^T over the
// positions of a window.
type PathStepSum struct {
	Layer, Head int
	D           int       // head width d
	Count       int       // positions summed (the window's length)
	Sum         []float64 // [d][d] row-major, symmetric
}

// sums forms layer n's step sums over positions [0, upto) for every head, in float64 (a window of
// 65,536 float32 rank-one terms would lose ~4 digits in a float32 sum).
func (st *pathSteps) sums(n, L, upto, H, d, workers int) []PathStepSum {
	out := make([]PathStepSum, H)
	native.ParallelFor(H, workers, func(h int) {
		S := make([]float64, d*d)
		for t := 0; t < upto; t++ {
			w, b := st.w[(h*L+t)*d:(h*L+t)*d+d], float64(st.beta[h*L+t])
			for r := 0; r < d; r++ {
				br := b * float64(w[r])
				row := S[r*d : r*d+d]
				for c := r; c < d; c++ { // upper triangle; mirrored below
					row[c] += br * float64(w[c])
				}
			}
		}
		for r := 0; r < d; r++ {
			for c := 0; c < r; c++ {
				S[r*d+c] = S[c*d+r]
			}
		}
		out[h] = PathStepSum{Layer: n, Head: h, D: d, Count: upto, Sum: S}
	})
	return out
}

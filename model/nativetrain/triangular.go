package nativetrain

import "routebench/model/native"

// invBase is the largest block unitLowerInverse inverts by substitution:
// below it the products are too small for the packed kernels to pay off.
const invBase = 32

// unitLowerInverse sets the n x n block y to (I + nm)^-1 for nm strictly
// lower triangular (nm's diagonal and upper part are never read); both
// have leading dimension ld. It is the blocked recursion of the gomlx
// graph (model/householder_attention.go's unitLowerInverse), with the inverses A', D'
// of the diagonal blocks of [[A, 0], [C, D]] giving the lower-left block
// -D' C A', on the packed kernels; blocks up to invBase by forward
// substitution. tmp holds at least n*n/4 floats.
// Deterministic: every element has one fixed order of operations.
func unitLowerInverse(y, nm []float32, n, ld int, tmp []float32) {
	if n <= invBase {
		// Row i of the inverse is e_i - sum_{s<i} nm_is y_s (y_s is zero
		// past column s).
		for i := 0; i < n; i++ {
			yi := y[i*ld : i*ld+n]
			clear(yi)
			yi[i] = 1
			ni := nm[i*ld : i*ld+i]
			for s, v := range ni {
				c := -v
				for j, x := range y[s*ld : s*ld+s+1] {
					yi[j] += c * x
				}
			}
		}
		return
	}
	h := (n/2 + 7) &^ 7 // panel-friendly split
	m := n - h
	unitLowerInverse(y, nm, h, ld, tmp)
	unitLowerInverse(y[h*ld+h:], nm[h*ld+h:], m, ld, tmp)
	// tmp = C A' (m x h), then the lower-left block = -D' tmp.
	native.Gemm{C: tmp, A: nm[h*ld:], B: y, M: m, K: h, N: h, Lda: ld, Ldb: ld, Tri: native.LowerB, Workers: 1}.Run()
	for i := 0; i < m*h; i++ {
		tmp[i] = -tmp[i]
	}
	native.Gemm{C: y[h*ld:], A: y[h*ld+h:], B: tmp, M: m, K: m, N: h, Ldc: ld, Lda: ld, Tri: native.LowerA, Workers: 1}.Run()
	for i := 0; i < h; i++ {
		clear(y[i*ld+h : i*ld+n])
	}
}

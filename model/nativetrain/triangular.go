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
		// past column s), the terms of each element in order of s; four
		// rows s at a time over the columns all four reach, so that each
		// element is loaded and stored once per four terms.
		for i := 0; i < n; i++ {
			yi := y[i*ld : i*ld+n]
			clear(yi)
			yi[i] = 1
			ni := nm[i*ld : i*ld+i]
			s := 0
			for ; s+4 <= i; s += 4 {
				c0, c1, c2, c3 := -ni[s], -ni[s+1], -ni[s+2], -ni[s+3]
				y0 := y[s*ld : s*ld+s+1]
				y1 := y[(s+1)*ld : (s+1)*ld+s+2]
				y2 := y[(s+2)*ld : (s+2)*ld+s+3]
				y3 := y[(s+3)*ld : (s+3)*ld+s+4]
				yr := yi[:len(y0)]
				y1, y2, y3 = y1[:len(yr)+1], y2[:len(yr)+2], y3[:len(yr)+3]
				for j := range yr {
					yr[j] = yr[j] + c0*y0[j] + c1*y1[j] + c2*y2[j] + c3*y3[j]
				}
				// Column s+1 on gets terms from rows s+1.. only.
				yi[s+1] = yi[s+1] + c1*y1[s+1] + c2*y2[s+1] + c3*y3[s+1]
				yi[s+2] = yi[s+2] + c2*y2[s+2] + c3*y3[s+2]
				yi[s+3] += c3 * y3[s+3]
			}
			for ; s < i; s++ {
				c := -ni[s]
				ys := y[s*ld : s*ld+s+1]
				yr := yi[:len(ys)]
				for j, x := range ys {
					yr[j] += c * x
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

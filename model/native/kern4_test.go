//go:build amd64 && !purego

package native

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMMAsmFourRowTail checks mmAsm on row counts whose remainder after the
// 6- (or 12-) row tiles is 4 or 8 (m = 6n + 2), or 2 (the padded path), in all three modes and both widths, against a
// float64 reference, and bit for bit against the same rows run through the
// zero-padded mmTail (which the 4-row tile replaced).
func TestMMAsmFourRowTail(t *testing.T) {
	if !avx512Available() {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(9, 10))
	for _, m := range []int{4, 8, 10, 14, 16, 20, 32, 64} {
		for _, w := range []int{32, 64} {
			for _, mode := range []int{modeSet, modeAcc, modeScale} {
				t.Run(fmt.Sprintf("m=%d/w=%d/mode=%d", m, w, mode), func(t *testing.T) {
					const k, lda, ldb, ldc = 37, 40, 70, 75
					a, b := randSlice(r, m*lda, 1), randSlice(r, k*ldb, 1)
					scale := randSlice(r, m, 1)
					c := randSlice(r, m*ldc, 1)
					c0 := append([]float32(nil), c...)
					mmAsm(c, ldc, a, lda, b, ldb, m, k, w, mode, scale)
					// the last 4 rows through the padded copy, as before
					cp := append([]float32(nil), c0...)
					i := m - 4
					mmTail(cp[i*ldc:], ldc, a[i*lda:], lda, b, ldb, 4, k, w, mode, scale[i:])
					for i := 0; i < m; i++ {
						for j := 0; j < ldc; j++ {
							got := c[i*ldc+j]
							if j >= w {
								if got != c0[i*ldc+j] {
									t.Fatalf("c[%d][%d] beyond w changed", i, j)
								}
								continue
							}
							want, mag := 0.0, 0.0
							switch mode {
							case modeAcc:
								want, mag = float64(c0[i*ldc+j]), math.Abs(float64(c0[i*ldc+j]))
							case modeScale:
								want = float64(c0[i*ldc+j]) * float64(scale[i])
								mag = math.Abs(want)
							}
							for kk := 0; kk < k; kk++ {
								p := float64(a[i*lda+kk]) * float64(b[kk*ldb+j])
								want += p
								mag += math.Abs(p)
							}
							if math.Abs(float64(got)-want) > tolDot*mag+1e-30 {
								t.Fatalf("c[%d][%d] = %g, float64 reference %g", i, j, got, want)
							}
							if i >= m-4 && got != cp[i*ldc+j] {
								t.Fatalf("c[%d][%d] = %g, the padded 6-row tile gives %g", i, j, got, cp[i*ldc+j])
							}
						}
					}
				})
			}
		}
	}
}

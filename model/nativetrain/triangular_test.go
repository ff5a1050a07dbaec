package nativetrain

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestUnitLowerInverse checks the blocked inverse against float64 forward
// substitution at sizes that stay in the base case, split once, split
// unevenly and recurse twice, inside a larger leading dimension, with
// entries of PaTH's size (|beta w.w| < 2) and garbage on and above the
// diagonal, which must not be read.
func TestUnitLowerInverse(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 7, 32, 33, 64, 100, 130, 256} {
		ld := n + 3
		nm := make([]float32, n*ld)
		for i := range nm {
			nm[i] = float32(r.NormFloat64())
		}
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				nm[i*ld+j] = float32(0.5 * (2*r.Float64() - 1))
			}
		}
		// The reference: row i = e_i - sum_{s<i} nm_is row s, in float64.
		want := make([]float64, n*n)
		for i := 0; i < n; i++ {
			want[i*n+i] = 1
			for s := 0; s < i; s++ {
				for j := 0; j <= s; j++ {
					want[i*n+j] -= float64(nm[i*ld+s]) * want[s*n+j]
				}
			}
		}
		y := make([]float32, n*ld)
		for i := range y {
			y[i] = float32(math.NaN()) // every element must be written
		}
		unitLowerInverse(y, nm, n, ld, make([]float32, n*n/4+1))
		var e, scale float64
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				e = math.Max(e, math.Abs(float64(y[i*ld+j])-want[i*n+j]))
				scale = math.Max(scale, math.Abs(want[i*n+j]))
				if j > i && y[i*ld+j] != 0 || j == i && y[i*ld+j] != 1 {
					t.Fatalf("n %d: y[%d][%d] = %g, want %d", n, i, j, y[i*ld+j], b2i(j == i))
				}
			}
		}
		if math.IsNaN(e) || e > 1e-5*scale {
			t.Errorf("n %d: max |blocked - float64 substitution| = %.3g at scale %.3g", n, e, scale)
		}
		t.Logf("n %d: max error %.2g of %.2g", n, e, scale)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

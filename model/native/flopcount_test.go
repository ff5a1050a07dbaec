//go:build flopcount

package native

import "testing"

// TestFlopCount: a dense product counts its 2 m k n operations, plain and
// with A transposed in place (both panel paths); a causal one (LowerC)
// counts fewer, and no fewer than the wanted lower triangle's.
func TestFlopCount(t *testing.T) {
	m, k, n := 130, 70, 100
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for _, ta := range []bool{false, true} {
		ResetFlops()
		Gemm{C: c, A: a, B: b, M: m, K: k, N: n, TA: ta, Workers: 2}.Run()
		if got, want := ExecutedFlops(), int64(2*m*k*n); got != want {
			t.Errorf("dense %dx%dx%d (TA %v): counted %d operations, want %d", m, k, n, ta, got, want)
		}
	}
	ResetFlops()
	Gemm{C: c, A: a, B: b, M: m, K: k, N: n, Tri: LowerC, Workers: 1}.Run()
	got, dense, tri := ExecutedFlops(), int64(2*m*k*n), int64(0)
	for i := 0; i < m; i++ {
		tri += int64(2 * k * min(i+1, n))
	}
	if got >= dense || got < tri {
		t.Errorf("LowerC %dx%dx%d: counted %d operations, want fewer than the dense %d and at least the triangle's %d", m, k, n, got, dense, tri)
	}
}

package openblas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"routebench/internal/procstat"
	"routebench/model/native"
)

// shape is one product: op(A) M x K times op(B) K x N, A stored
// transposed when TA (dW = X^T dY), B when TB (dX = dY W^T).
type shape struct {
	name    string
	m, k, n int
	ta, tb  bool
}

// Shapes: the large square product both libraries peak on, then the
// native trainer's products at the protocol shape (T 512 x batch 8 = 4,096
// rows) for d_model 128 and 256 (d_hidden 4 d_model): forward QKV, output
// projection, MLP up and down; the weight gradients X^T dY; one dX = dY W^T.
func shapes() []shape {
	s := []shape{{name: "peak", m: 2048, k: 2048, n: 2048}}
	const rows = 4096
	for _, d := range []int{128, 256} {
		s = append(s,
			shape{name: fmt.Sprintf("d%d-qkv", d), m: rows, k: d, n: 3 * d},
			shape{name: fmt.Sprintf("d%d-out", d), m: rows, k: d, n: d},
			shape{name: fmt.Sprintf("d%d-mlpup", d), m: rows, k: d, n: 4 * d},
			shape{name: fmt.Sprintf("d%d-mlpdown", d), m: rows, k: 4 * d, n: d},
			shape{name: fmt.Sprintf("d%d-dWqkv", d), m: d, k: rows, n: 3 * d, ta: true},
			shape{name: fmt.Sprintf("d%d-dWup", d), m: d, k: rows, n: 4 * d, ta: true},
			shape{name: fmt.Sprintf("d%d-dWdown", d), m: 4 * d, k: rows, n: d, ta: true},
			shape{name: fmt.Sprintf("d%d-dXqkv", d), m: rows, k: 3 * d, n: d, tb: true},
		)
	}
	return s
}

func (s shape) String() string {
	t := ""
	if s.ta {
		t = "/TA"
	}
	if s.tb {
		t = "/TB"
	}
	return fmt.Sprintf("%s/%dx%dx%d%s", s.name, s.m, s.k, s.n, t)
}

func operands(s shape) (a, b, c []float32) {
	r := rand.New(rand.NewPCG(uint64(s.m), uint64(s.n)))
	a, b, c = make([]float32, s.m*s.k), make([]float32, s.k*s.n), make([]float32, s.m*s.n)
	for i := range a {
		a[i] = float32(r.NormFloat64())
	}
	for i := range b {
		b[i] = float32(r.NormFloat64())
	}
	return a, b, c
}

// TestAgreement checks both libraries against each other on every shape
// before either is timed: |C| grows as sqrt(K) on unit-normal operands,
// the tolerance as K, so a swapped transpose (an O(sqrt K) error) fails.
func TestAgreement(t *testing.T) {
	if !Available {
		t.Skip("built without -tags openblas: nothing to compare the native GEMM with")
	}
	for _, s := range shapes() {
		if s.name == "peak" {
			s.m, s.k, s.n = 256, 2048, 192 // the same K reduction, less time
		}
		a, b, want := operands(s)
		got := make([]float32, len(want))
		SetThreads(2)
		Sgemm(want, a, b, s.m, s.k, s.n, s.ta, s.tb)
		native.MatMul(got, a, b, s.m, s.k, s.n, s.ta, s.tb, false, 0)
		tol := 1e-6 * float64(s.k)
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > tol {
				t.Fatalf("%v: C[%d] native %g, OpenBLAS %g (|diff| %g > %g)", s, i, got[i], want[i], d, tol)
			}
		}
	}
}

// BenchmarkSgemm runs every shape through OpenBLAS on 1 and 2 threads and
// the native GEMM on 1 worker and on GOMAXPROCS, one process, so that the
// four GFLOP/s figures of a shape are one run's comparison.
func BenchmarkSgemm(b *testing.B) {
	impls := []struct {
		name     string
		openblas bool
		threads  int
	}{{"openblas-1t", true, 1}, {"openblas-2t", true, 2}, {"native-1t", false, 1}, {"native-2t", false, 2}}
	for _, s := range shapes() {
		a, bb, c := operands(s)
		for _, im := range impls {
			b.Run(fmt.Sprintf("impl=%s/%v", im.name, s), func(b *testing.B) {
				if im.openblas && !Available {
					b.Skip("built without -tags openblas (make bench-speed installs libopenblas-dev and sets it)")
				}
				run := func() { native.MatMul(c, a, bb, s.m, s.k, s.n, s.ta, s.tb, false, im.threads) }
				if im.openblas {
					SetThreads(im.threads)
					run = func() { Sgemm(c, a, bb, s.m, s.k, s.n, s.ta, s.tb) }
				}
				run() // warm the caches, OpenBLAS's thread pool, native's packing pool
				cpu0 := procstat.CPUSeconds()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					run()
				}
				b.StopTimer()
				sec := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(2*float64(s.m)*float64(s.k)*float64(s.n)/sec/1e9, "GFLOP/s")
				b.ReportMetric((procstat.CPUSeconds()-cpu0)/float64(b.N), "cpu-s/op")
			})
		}
	}
}

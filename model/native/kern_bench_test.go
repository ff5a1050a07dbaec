package native

import (
	"math/rand/v2"
	"testing"
)

// Micro-benchmarks of the kernels alone, one goroutine, data in L1/L2.

func BenchmarkQKBlock(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	nq, d, bk := 48, 32, 64 // the evaluator's query and key blocks (model/nativeeval)
	q, kt, s := randSlice(r, nq*d, 1), randSlice(r, d*bk, 1), make([]float32, nq*bk)
	for b.Loop() {
		qkBlock(s, q, kt, nq, d, bk)
	}
	b.ReportMetric(float64(2*nq*d*bk)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkPVBlock(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	nq, d, bk := 48, 32, 64 // the evaluator's query and key blocks (model/nativeeval)
	p, v, o := randSlice(r, nq*bk, 1), randSlice(r, bk*d, 1), make([]float32, nq*d)
	for b.Loop() {
		pvBlock(o, p, v, nq, d, bk, bk)
	}
	b.ReportMetric(float64(2*nq*d*bk)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkExpShift(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x := randSlice(r, 4096, 1)
	for b.Loop() {
		expShift(x, 3)
	}
	b.ReportMetric(float64(len(x))*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gexp/s")
}

func BenchmarkGemm(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	m, k, n := 1024, 128, 384
	a, bb, c := randSlice(r, m*k, 1), randSlice(r, k*n, 1), make([]float32, m*n)
	pb := packB(bb, k, n)
	for b.Loop() {
		gemmParallel(c, n, a, k, pb, m, false, 0)
	}
	b.ReportMetric(float64(2*m*k*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkOnlineSoftmax64: one online-softmax step of the evaluator's
// 48 x 64 score block (ns/row is the figure to compare with the products').
func BenchmarkOnlineSoftmax64(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const nq = 48
	sc0 := randSlice(r, nq*64, 3)
	sc := make([]float32, nq*64)
	m, l, f, rs := make([]float32, nq), make([]float32, nq), make([]float32, nq), make([]float32, nq)
	for b.Loop() {
		copy(sc, sc0)
		OnlineSoftmax64(sc, nq, m, l, f, rs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/nq, "ns/row")
}

// BenchmarkOnlineSoftmaxOffsets64: the step with a forgetting gate's
// offsets, as PaTH-FoX meets them at L = 4,096: the per-key terms fall
// by 3.5 a block, so about half of the probabilities are under e^-87
// (exact 0s; the subnormals they once were cost a microcode assist each).
func BenchmarkOnlineSoftmaxOffsets64(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const nq = 48
	sc0 := randSlice(r, nq*64, 3)
	sc := make([]float32, nq*64)
	m, l, f, rs := make([]float32, nq), make([]float32, nq), make([]float32, nq), make([]float32, nq)
	a, bs := make([]float32, nq), make([]float32, 64)
	for j := range bs {
		bs[j] = -70 - 35*float32(j)/64 // keys 70 to 105 below the row's own
	}
	for b.Loop() {
		copy(sc, sc0)
		for i := range m {
			m[i] = 0 // the running max of an earlier, nearer block
		}
		OnlineSoftmaxOffsets64(sc, nq, a, bs, m, l, f, rs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/nq, "ns/row")
}

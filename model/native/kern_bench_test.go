package native

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"routebench/modelspec/weights/weightstest"
)

// Micro-benchmarks of the kernels alone, one goroutine, data in L1/L2.

func BenchmarkQKBlock(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	nq, d, bk := blockQ, 32, blockK
	q, kt, s := randSlice(r, nq*d, 1), randSlice(r, d*bk, 1), make([]float32, nq*bk)
	for b.Loop() {
		qkBlock(s, q, kt, nq, d, bk)
	}
	b.ReportMetric(float64(2*nq*d*bk)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkPVBlock(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	nq, d, bk := blockQ, 32, blockK
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

// BenchmarkLogProbs is a whole forward at the cpu profile's shape (2
// layers, d_model 128, 4 heads, vocabulary 257) with the costliest variant.
func BenchmarkLogProbs(b *testing.B) {
	a := variantArch("random-qkv")
	a.Vocab, a.DModel, a.Heads, a.DHidden = 257, 128, 4, 512
	m, err := Load(weightstest.RandomSet(b, a, 1))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		L    int
		diag bool
	}{{4096, false}, {4096, true}, {16384, false}} {
		b.Run(fmt.Sprintf("L=%d/diag=%v", c.L, c.diag), func(b *testing.B) {
			toks := make([]int32, c.L)
			for i := range toks {
				toks[i] = int32(i * 31 % 256)
			}
			var opts Options
			if c.diag {
				opts.FarDistances = []int{128, 32}
			}
			for b.Loop() {
				if _, err := m.LogProbs(context.Background(), toks, toks, opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.L)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

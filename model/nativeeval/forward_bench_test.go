package nativeeval

import (
	"context"
	"fmt"
	"testing"

	"routebench/modelspec/weights/weightstest"
)

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

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

// BenchmarkPathFox is a whole forward of PaTH with and without FoX's
// forgetting gate at the cpu profile's shape, with and without the
// diagnostics (the evaluate stage's forward has them on its far windows).
func BenchmarkPathFox(b *testing.B) {
	for _, variant := range []string{"path", "path-fox"} {
		a := variantArch(variant)
		a.Vocab, a.DModel, a.Heads, a.DHidden = 257, 128, 4, 512
		m, err := Load(weightstest.RandomSet(b, a, 1))
		if err != nil {
			b.Fatal(err)
		}
		for _, diag := range []bool{false, true} {
			const L = 4096
			b.Run(fmt.Sprintf("%s/L=%d/diag=%v", variant, L, diag), func(b *testing.B) {
				toks := make([]int32, L)
				for i := range toks {
					toks[i] = int32(i * 31 % 256)
				}
				var opts Options
				if diag {
					opts.FarDistances = []int{128, 512}
				}
				for b.Loop() {
					if _, err := m.LogProbs(context.Background(), toks, toks, opts); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(L)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

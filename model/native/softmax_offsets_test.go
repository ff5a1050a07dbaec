package native

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestOnlineSoftmaxOffsets64: the fused offsets give bit for bit what
// AddOffsets on each row and then the plain step give (the softmax, the
// running m, l, f, rs and the entropy numerator), with both kernel sets,
// over two consecutive blocks, with masked (-Inf) keys, rows of only -Inf
// and offsets large enough to move the row max.
func TestOnlineSoftmaxOffsets64(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		const nq = 21 // not a multiple of 6 or 16
		r := rand.New(rand.NewPCG(9, 10))
		ninf := float32(math.Inf(-1))
		type state struct{ m, l, f, rs, ent []float32 }
		fresh := func() *state {
			s := &state{m: make([]float32, 48), l: make([]float32, 48), f: make([]float32, 48), rs: make([]float32, 48), ent: make([]float32, 48)}
			for i := range s.m {
				s.m[i] = ninf
			}
			return s
		}
		for _, ent := range []bool{false, true} {
			got, want := fresh(), fresh()
			for step := 0; step < 2; step++ {
				sc := make([]float32, nq*64)
				for i := 0; i < nq; i++ {
					nk := r.IntN(65) // unmasked keys: 0 (all -Inf) to 64
					for j := 0; j < 64; j++ {
						sc[i*64+j] = float32(r.NormFloat64() * 3)
						if j >= nk {
							sc[i*64+j] = ninf
						}
					}
				}
				a, b := make([]float32, nq), make([]float32, 64)
				for i := range a {
					a[i] = float32(r.NormFloat64() * 4)
				}
				for j := range b {
					b[j] = float32(-0.3*float64(63-j) + r.NormFloat64())
				}
				ref := slices.Clone(sc)
				for i := 0; i < nq; i++ {
					AddOffsets(ref[i*64:(i+1)*64], a[i], b)
				}
				if ent {
					OnlineSoftmaxEntropyOffsets64(sc, nq, a, b, got.m, got.l, got.f, got.rs, got.ent)
					OnlineSoftmaxEntropy64(ref, nq, want.m, want.l, want.f, want.rs, want.ent)
				} else {
					OnlineSoftmaxOffsets64(sc, nq, a, b, got.m, got.l, got.f, got.rs)
					OnlineSoftmax64(ref, nq, want.m, want.l, want.f, want.rs)
				}
				for i := 0; i < nq*64; i++ {
					if math.Float32bits(sc[i]) != math.Float32bits(ref[i]) {
						t.Fatalf("ent=%v step %d row %d key %d: %v, AddOffsets then the plain step give %v", ent, step, i/64, i%64, sc[i], ref[i])
					}
				}
				for i := 0; i < nq; i++ {
					g := []float32{got.m[i], got.l[i], got.f[i], got.rs[i], got.ent[i]}
					w := []float32{want.m[i], want.l[i], want.f[i], want.rs[i], want.ent[i]}
					for k := range g {
						if math.Float32bits(g[k]) != math.Float32bits(w[k]) {
							t.Fatalf("ent=%v step %d row %d: m l f rs ent = %v, AddOffsets then the plain step give %v", ent, step, i, g, w)
						}
					}
				}
			}
		}
	})
}

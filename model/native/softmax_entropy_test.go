package native

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestOnlineSoftmaxEntropy64 checks the fused entropy numerator against a
// float64 reference over two consecutive blocks (so the running max comes
// from before), with rows of nk < 64 unmasked keys then -Inf, rows of only
// -Inf, and scores far below the max (exp underflows), and checks that the
// softmax outputs are exactly OnlineSoftmax64's.
func TestOnlineSoftmaxEntropy64(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		const nq = 21 // not a multiple of 6 or 16
		r := rand.New(rand.NewPCG(7, 8))
		ninf := float32(math.Inf(-1))
		m, l := make([]float32, 48), make([]float32, 48)
		m2, l2 := make([]float32, 48), make([]float32, 48)
		for i := range m {
			m[i], m2[i] = ninf, ninf
		}
		f, rs, f2, rs2 := make([]float32, 48), make([]float32, 48), make([]float32, 48), make([]float32, 48)
		ent := make([]float32, 48)
		for step := 0; step < 2; step++ {
			sc := make([]float32, nq*64)
			for i := 0; i < nq; i++ {
				row := sc[i*64 : (i+1)*64]
				nk := r.IntN(64) // unmasked keys: 0 (all -Inf) to 63
				if i == 3 {
					nk = 64
				}
				for j := range row {
					row[j] = float32(r.NormFloat64()*3 + 2*float64(step))
					if j%7 == 5 {
						row[j] -= 110 // exp underflows or is denormal
					}
					if j >= nk {
						row[j] = ninf
					}
				}
			}
			mOld := append([]float32(nil), m[:nq]...)
			ref := append([]float32(nil), sc...)
			OnlineSoftmax64(ref, nq, m2, l2, f2, rs2)
			pre := append([]float32(nil), sc...)
			OnlineSoftmaxEntropy64(sc, nq, m, l, f, rs, ent)
			for i := 0; i < nq; i++ {
				if m[i] != m2[i] || l[i] != l2[i] || f[i] != f2[i] || rs[i] != rs2[i] {
					t.Fatalf("step %d row %d: m l f rs = %v %v %v %v, OnlineSoftmax64 gives %v %v %v %v",
						step, i, m[i], l[i], f[i], rs[i], m2[i], l2[i], f2[i], rs2[i])
				}
				for j := 0; j < 64; j++ {
					if sc[i*64+j] != ref[i*64+j] {
						t.Fatalf("step %d row %d key %d: e = %v, OnlineSoftmax64 gives %v", step, i, j, sc[i*64+j], ref[i*64+j])
					}
				}
				// float64 reference from the scores alone
				mn := float64(mOld[i])
				for _, s := range pre[i*64 : (i+1)*64] {
					mn = math.Max(mn, float64(s))
				}
				var want, mag float64
				for _, s := range pre[i*64 : (i+1)*64] {
					if math.IsInf(float64(s), -1) {
						continue
					}
					d := float64(s) - mn
					want += math.Exp(d) * d
					mag += math.Abs(math.Exp(d) * d)
				}
				got := float64(ent[i])
				if math.IsNaN(got) || math.Abs(got-want) > 1e-5*mag+1e-30 {
					t.Errorf("step %d row %d: entropy numerator %.9g, float64 reference %.9g (sum of magnitudes %.3g)", step, i, got, want, mag)
				}
			}
		}
	})
}

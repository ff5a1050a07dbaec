package native

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestOnlineSoftmax64 checks one online-softmax step against float64 over
// three consecutive blocks (the running max then comes from before): every
// exp(s - m_new) to a relative (2 + |s - m_new|) ulps (the argument's
// rounding in 2^(v log2e) grows with |v|; 1.3 ulp is the polynomial's own),
// an exact 0 for -Inf scores, and m, f = exp(m_old - m_new), the block sums
// rs and l = l f + rs to 1e-6 relative. Rows hold nq = 23 (odd: the
// two-row loop's leftover) rows of unmasked keys then -Inf, rows of only
// -Inf, and scores far below the max (exp underflows).
func TestOnlineSoftmax64(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		const nq = 23
		r := rand.New(rand.NewPCG(3, 4))
		ninf := float32(math.Inf(-1))
		m, l, f, rs := make([]float32, 48), make([]float32, 48), make([]float32, 48), make([]float32, 48)
		m64, l64 := make([]float64, nq), make([]float64, nq)
		for i := range m {
			m[i] = ninf
		}
		for i := range m64 {
			m64[i] = math.Inf(-1)
		}
		const ulp = 1.0 / (1 << 23)
		var worst float64 // the largest error seen, in ulps of the argument-scaled bound
		for step := 0; step < 3; step++ {
			sc := make([]float32, nq*64)
			for i := 0; i < nq; i++ {
				row := sc[i*64 : (i+1)*64]
				nk := r.IntN(65)
				if i == 2 && step == 0 {
					nk = 0 // a row with no keys yet: m stays -Inf
				}
				for j := range row {
					row[j] = float32(r.NormFloat64()*4 + 3*float64(step))
					if j%9 == 4 {
						row[j] -= 100 // exp underflows to a denormal or 0
					}
					if j >= nk {
						row[j] = ninf
					}
				}
			}
			pre := append([]float32(nil), sc...)
			mOld := append([]float32(nil), m[:nq]...)
			OnlineSoftmax64(sc, nq, m, l, f, rs)
			for i := 0; i < nq; i++ {
				mn := float64(mOld[i])
				for _, s := range pre[i*64 : (i+1)*64] {
					mn = math.Max(mn, float64(s))
				}
				if float64(m[i]) != mn {
					t.Fatalf("step %d row %d: m = %v, want %v", step, i, m[i], mn)
				}
				if math.IsInf(mn, -1) {
					continue // no key yet: nothing else is defined
				}
				var sum float64
				for j, s := range pre[i*64 : (i+1)*64] {
					got := float64(sc[i*64+j])
					if math.IsInf(float64(s), -1) {
						if got != 0 {
							t.Fatalf("step %d row %d key %d: -Inf score gives %v, want 0", step, i, j, got)
						}
						continue
					}
					v := float64(s) - mn
					want := math.Exp(v)
					sum += want
					tol := (2 + math.Abs(v)) * ulp * want
					if want < 0x1p-126 {
						tol = 0x1p-126 // denormal results: absolute
					}
					if e := math.Abs(got - want); e > tol {
						t.Fatalf("step %d row %d key %d: exp(%.9g) = %.9g, float64 %.9g (error %.3g > %.3g)", step, i, j, v, got, want, e, tol)
					} else if tol > 0 {
						worst = max(worst, e/tol)
					}
				}
				fWant := math.Exp(float64(mOld[i]) - mn) // 0 on the first block
				if math.Abs(float64(f[i])-fWant) > 1e-6*fWant {
					t.Fatalf("step %d row %d: f = %.9g, float64 %.9g", step, i, f[i], fWant)
				}
				if math.Abs(float64(rs[i])-sum) > 1e-6*sum {
					t.Fatalf("step %d row %d: rs = %.9g, float64 %.9g", step, i, rs[i], sum)
				}
				l64[i] = l64[i]*fWant + sum
				m64[i] = mn
				if math.Abs(float64(l[i])-l64[i]) > 2e-6*l64[i] {
					t.Fatalf("step %d row %d: l = %.9g, float64 %.9g", step, i, l[i], l64[i])
				}
			}
		}
		t.Logf("largest exp error: %.2f of its bound", worst)
	})
}

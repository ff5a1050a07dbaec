package theory

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// traceMoments returns the mean and SE of tr Q and of (tr Q)^2 over n draws.
func traceMoments(d, n int, signFix bool) (tr, tr2 moments) {
	rng := newRNG(42, uint64(d))
	for i := 0; i < n; i++ {
		q := haarOrthogonalFix(rng, d, signFix)
		t := mat.Trace(q)
		tr.add(t)
		tr2.add(t * t)
	}
	return tr, tr2
}

// For Haar Q on O(d), d >= 2: E[tr Q] = 0 and E[(tr Q)^2] = 1.
func TestHaarMoments(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 1500
	}
	for _, d := range []int{2, 5, 16} {
		tr, tr2 := traceMoments(d, n, true)
		if math.Abs(tr.mean()) > 4*tr.se() {
			t.Errorf("d=%d: E[tr Q] = %.4f +- %.4f, want 0", d, tr.mean(), tr.se())
		}
		if math.Abs(tr2.mean()-1) > 4*tr2.se() {
			t.Errorf("d=%d: E[(tr Q)^2] = %.4f +- %.4f, want 1", d, tr2.mean(), tr2.se())
		}
		t.Logf("d=%d: E[tr Q] = %.4f +- %.4f, E[(tr Q)^2] = %.4f +- %.4f", d, tr.mean(), tr.se(), tr2.mean(), tr2.se())
	}
}

// The same moment test must reject QR without the sign fix, or it would not
// be testing anything.
func TestHaarMomentsRejectMissingSignFix(t *testing.T) {
	d, n := 5, 1500
	tr, tr2 := traceMoments(d, n, false)
	t.Logf("no sign fix, d=%d: E[tr Q] = %.4f +- %.4f, E[(tr Q)^2] = %.4f +- %.4f", d, tr.mean(), tr.se(), tr2.mean(), tr2.se())
	if math.Abs(tr.mean()) <= 4*tr.se() && math.Abs(tr2.mean()-1) <= 4*tr2.se() {
		t.Errorf("moment test cannot tell QR without sign fix from Haar")
	}
}

func TestHaarIsOrthogonal(t *testing.T) {
	q := haarOrthogonal(newRNG(7), 24)
	var qtq mat.Dense
	qtq.Mul(q.T(), q)
	for i := 0; i < 24; i++ {
		qtq.Set(i, i, qtq.At(i, i)-1)
	}
	if e := mat.Norm(&qtq, 2); e > 1e-12 {
		t.Errorf("||Q^T Q - I|| = %g", e)
	}
}

// Every stepper keeps the accumulated transport orthogonal and agrees with
// its own dense steps: Pi_a Pi_b^T from the state equals the product of the
// steps in between, checked through transposeApply as well.
func TestSteppersConsistent(t *testing.T) {
	for _, f := range append(defaultFamilies(8, 6, 6), StepFamily{Name: "id", Kind: "identity", Dim: 4}) {
		s := newStepper(f)
		d := s.dim()
		st := make([]float64, s.stateLen())
		s.reset(st)
		rng := newRNG(3)
		for k := 0; k < 500; k++ {
			s.advance(rng, st)
		}
		p := make([]float64, d*d)
		id := make([]float64, s.stateLen())
		s.reset(id)
		s.relative(st, st, p) // Pi Pi^T = I
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(p[i*d+j]-want) > 1e-10 {
					t.Fatalf("%s: Pi Pi^T[%d,%d] = %g after 500 steps", f.Name, i, j, p[i*d+j])
				}
			}
		}
		// Pi^T u through transposeApply equals relative(I, Pi) u.
		u := randomUnit(rng, make([]float64, d))
		a := make([]float64, d)
		s.transposeApply(st, u, a)
		s.relative(id, st, p) // I Pi^T
		for i := 0; i < d; i++ {
			var v float64
			for j := 0; j < d; j++ {
				v += p[i*d+j] * u[j]
			}
			if math.Abs(v-a[i]) > 1e-10 {
				t.Fatalf("%s: transposeApply disagrees with relative at %d: %g vs %g", f.Name, i, a[i], v)
			}
		}
		// Single steps are orthogonal too.
		s.sampleStep(rng, p)
		m := mat.NewDense(d, d, p)
		var mtm mat.Dense
		mtm.Mul(m.T(), m)
		for i := 0; i < d; i++ {
			mtm.Set(i, i, mtm.At(i, i)-1)
		}
		if e := mat.Norm(&mtm, 2); e > 1e-10 {
			t.Errorf("%s: step not orthogonal, ||M^T M - I|| = %g", f.Name, e)
		}
	}
}

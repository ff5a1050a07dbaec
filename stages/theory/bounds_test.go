package theory

import (
	"math"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Hand-computed cases of every bound formula.
func TestFarMassBoundHandCases(t *testing.T) {
	cases := []struct {
		m, k   int
		lambda float64
		want   float64
	}{
		{1, 1, 0, 0.5},                 // 1/(1+1)
		{3, 1, math.Log(2) / 2, 0.6},   // e^{2 lambda} = 2: 3/(3+2)
		{0, 4, 1, 0},                   // no far sources, no far mass
		{10, 5, math.Log(3) / 2, 0.4},  // 10/(10+15)
		{65536, 1, 0, 65536.0 / 65537}, // tends to 1
		{2, 2, math.Log(10) / 2, 1.0 / 11},
	}
	for _, c := range cases {
		got, err := farMassBound(c.m, c.k, c.lambda)
		if err != nil || !near(got, c.want, 1e-14) {
			t.Errorf("farMassBound(M=%d, K=%d, lambda=%g) = %v, %v; want %v", c.m, c.k, c.lambda, got, err, c.want)
		}
	}
	// Large lambda underflows to 0 instead of producing NaN.
	if got, err := farMassBound(1000, 1, 400); err != nil || got != 0 {
		t.Errorf("farMassBound(lambda=400) = %v, %v; want 0", got, err)
	}
	for _, c := range []struct {
		m, k   int
		lambda float64
		msg    string
	}{{1, 0, 1, "K=0"}, {1, -1, 1, "K=-1"}, {-1, 1, 1, "M=-1"}, {1, 1, -0.5, "lambda=-0.5"}, {1, 1, math.NaN(), "lambda=NaN"}} {
		if _, err := farMassBound(c.m, c.k, c.lambda); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("farMassBound(%d, %d, %v) error %v; want one naming %q", c.m, c.k, c.lambda, err, c.msg)
		}
	}
}

func TestConcentrationBoundHandCases(t *testing.T) {
	if got := levyBound(2, 1); !near(got, 2*math.Exp(-1), 1e-15) {
		t.Errorf("levyBound(2,1) = %v, want 2/e", got)
	}
	if got := levyBound(100, 0.2); !near(got, 2*math.Exp(-2), 1e-15) {
		t.Errorf("levyBound(100,0.2) = %v, want 2e^-2", got)
	}
	if got := levyBound(16, 0); got != 1 {
		t.Errorf("levyBound at t=0 = %v, want capped at 1", got)
	}
	if got := hoeffdingBound(4, 1, 0); !near(got, 2*math.Exp(-1), 1e-15) {
		t.Errorf("hoeffdingBound(4,1,0) = %v, want 2/e", got)
	}
	if got := hoeffdingBound(16, 0.75, 0.25); !near(got, 2*math.Exp(-1), 1e-15) { // 16*0.25/4 = 1
		t.Errorf("hoeffdingBound(16,0.75,0.25) = %v, want 2/e", got)
	}
	if got := hoeffdingBound(16, 0.1, 0.2); got != 1 {
		t.Errorf("hoeffdingBound below the shift = %v, want 1", got)
	}
	// slope ln 2, K=1, lambda=0: far = sum_{n>=2} 2^-n = 1/2, near = 1/2.
	if got := alibiFarMassBound(1, 0, math.Log(2)); !near(got, 0.5, 1e-14) {
		t.Errorf("alibiFarMassBound = %v, want 0.5", got)
	}
	// K=2, lambda=ln 2, slope ln 2: far = 2 * 1/4 = 1/2, near = (1/2)(1/2 + 1/4) = 3/8.
	if got := alibiFarMassBound(2, math.Log(2), math.Log(2)); !near(got, 0.5/(0.5+0.375), 1e-14) {
		t.Errorf("alibiFarMassBound = %v, want 4/7", got)
	}
}

func TestPredictedWindow(t *testing.T) {
	for _, c := range []struct {
		rho, eps float64
		want     int
	}{{0.5, 0.1, 4}, {0.5, 0.125, 4}, {0.9, 0.5, 7}, {0.01, 0.05, 1}, {0.875, 0.05, 23}} {
		if got, ok := predictedWindow(c.rho, c.eps); !ok || got != c.want {
			t.Errorf("predictedWindow(%v, %v) = %d, %v; want %d", c.rho, c.eps, got, ok, c.want)
		}
	}
	if _, ok := predictedWindow(1, 0.05); ok {
		t.Errorf("rho = 1 must have no window")
	}
}

// The exact Haar law: d = 3 is Archimedes (x_1 uniform on [-1,1]); for every
// d the exact tail lies below Levy's bound, as the check assumes.
func TestHaarLawAndLevy(t *testing.T) {
	for _, x := range []float64{0, 0.3, 0.9} {
		if got := haarTail(3, x); !near(got, 1-x, 1e-12) {
			t.Errorf("haarTail(3, %v) = %v, want %v", x, got, 1-x)
		}
	}
	if got := haarCDF(3)(0.5); !near(got, 0.75, 1e-12) {
		t.Errorf("haarCDF(3)(0.5) = %v, want 0.75", got)
	}
	for _, d := range []int{4, 16, 64, 256} {
		for _, s := range []float64{0.5, 1, 2, 4, 8, 16, 32} {
			tt := math.Sqrt(s / float64(d))
			if tt >= 1 {
				continue
			}
			if ex, b := haarTail(d, tt), levyBound(d, tt); ex > b {
				t.Errorf("d=%d s=%g: exact Haar tail %g above Levy bound %g", d, s, ex, b)
			}
		}
	}
}

func TestIncoherenceExactHandCase(t *testing.T) {
	// M=2, |b|^2=1, no noise, phi=0.5: plain = 4; transported = 2 + 2*1*0.5 = 3.
	p, tr := incoherenceExact(2, 1, 0, 2, 0.5)
	if p != 4 || !near(tr, 3, 1e-15) {
		t.Errorf("incoherenceExact = %v, %v; want 4, 3", p, tr)
	}
	// M=3, |b|^2=2, noise^2=0.5, d=4, phi=0.5: plain = 18+6 = 24;
	// trans = 3*(2+2) + 2*2*(2*0.5 + 1*0.25) = 12 + 5 = 17.
	p, tr = incoherenceExact(3, 2, 0.5, 4, 0.5)
	if p != 24 || !near(tr, 17, 1e-14) {
		t.Errorf("incoherenceExact = %v, %v; want 24, 17", p, tr)
	}
}

func TestKSAndZ(t *testing.T) {
	if z := bonferroniZ(0.05, 1); !near(z, 1.959964, 1e-5) {
		t.Errorf("bonferroniZ(0.05,1) = %v", z)
	}
	a := []float64{1, 2, 3, 4}
	if d := ksTwoSample(a, a); d != 0 {
		t.Errorf("KS of identical samples = %v", d)
	}
	if d := ksTwoSample([]float64{1, 2}, []float64{3, 4}); d != 1 {
		t.Errorf("KS of separated samples = %v", d)
	}
	if d := ksOneSample([]float64{0.25, 0.75}, func(x float64) float64 { return x }); !near(d, 0.25, 1e-15) {
		t.Errorf("one-sample KS = %v", d)
	}
}

package decide

import (
	"math"
	"math/rand/v2"
	"testing"

	"routebench/stats"
)

// EdgeP < Alpha exactly when the printed interval clears the edge, on
// either side, for random tables.
func TestEdgePMatchesInterval(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		S, W := 1+r.IntN(5), 2+r.IntN(8)
		y := make([][]float64, S)
		for s := range y {
			y[s] = make([]float64, W)
			for w := range y[s] {
				y[s][w] = 0.05*r.NormFloat64() - 0.03
			}
		}
		e := stats.CrossedT(y)
		for _, side := range []Side{Below, Above} {
			edge := 0.06 * (r.Float64() - 0.5)
			clears := (side == Below && e.Hi < edge) || (side == Above && e.Lo > edge)
			if p := EdgeP(e, edge, side); (p < Alpha) != clears && math.Abs(p-Alpha) > 1e-9 {
				t.Fatalf("case %d: interval [%.4f, %.4f] vs edge %.4f side %d: p %.4f, clears %v", i, e.Lo, e.Hi, edge, side, p, clears)
			}
		}
	}
}

// A table without spread (every value the same, as M3's log n* ratios of a
// fixed angle table were) has no test: p NaN on either side of the edge,
// where the same mean with spread is tested (the control).
func TestEdgePNoSpread(t *testing.T) {
	flat := stats.CrossedT([][]float64{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}})
	for _, edge := range []float64{-1, 1} {
		for _, side := range []Side{Below, Above} {
			if p := EdgeP(flat, edge, side); !math.IsNaN(p) {
				t.Errorf("no spread, edge %v side %d: p %v, want NaN (not testable)", edge, side, p)
			}
		}
	}
	spread := stats.CrossedT([][]float64{{0.01, -0.01, 0.02}, {-0.02, 0.01, 0}, {0, 0.01, -0.01}})
	if p := EdgeP(spread, 1, Below); !(p < Alpha) {
		t.Errorf("control: a small spread far below the edge: p %v, want < %v", p, Alpha)
	}
}

func TestHolm(t *testing.T) {
	p := []float64{0.01, 0.04, math.NaN(), 0.03, 0.005}
	got := Holm(p)
	// sorted: 0.005 (x4) 0.02, 0.01 (x3) 0.03, 0.03 (x2) 0.06, 0.04 (x1) 0.04 -> monotone 0.06
	want := []float64{0.03, 0.06, math.NaN(), 0.06, 0.02}
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || (!math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 1e-12) {
			t.Fatalf("Holm(%v) = %v, want %v", p, got, want)
		}
	}
}

// Power is the test's size at the edge, near 1 far past it, and grows
// with seeds; a power that ignored the seed spread would not.
func TestPower(t *testing.T) {
	comp := Components{Seed: 0.054 * 0.054, Window: 0.043 * 0.043, Resid: 0.02 * 0.02, DFSeed: 2, DFWindow: 1, DFResid: 2}
	fixed := comp
	fixed.DFSeed, fixed.DFWindow, fixed.DFResid = 1e9, 1e9, 1e9 // no redraw
	if p := Power(0, fixed, 5, 8, 0, Below, 4000, 1); p > 0.05 {
		t.Errorf("power at the edge %.3f, want the size (<= 0.025 + noise)", p)
	}
	if p := Power(-1, comp, 5, 8, 0, Below, 500, 1); p < 0.95 { // the df-1 window redraws have heavy tails
		t.Errorf("power far past the edge %.3f, want ~1", p)
	}
	p3, p8 := Power(-0.08, comp, 3, 8, 0, Below, 2000, 1), Power(-0.08, comp, 8, 8, 0, Below, 2000, 1)
	if !(p8 > p3+0.1) {
		t.Errorf("power with 3 seeds %.3f, with 8 %.3f: want it to grow", p3, p8)
	}
	noSeed := comp
	noSeed.Seed = 0
	if pn := Power(-0.08, noSeed, 3, 8, 0, Below, 2000, 1); !(pn > p3) {
		t.Errorf("power without seed spread %.3f not above with it %.3f", pn, p3)
	}
	t.Logf("C2-like, effect -0.08: power %.3f at 3 seeds, %.3f at 8", p3, p8)
	if s := SeedsFor(-0.08, fixed, 8, 0, Below, 20, 1); s < 3 || s > 20 {
		t.Errorf("seeds for 80%%: %d", s)
	}
}

package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Coverage by simulation: every interval the claims read must cover its
// target in 93-97% of replications at the window and seed counts the
// profiles use (cpu: 8 windows at the longest length, 1,024 at T, 5 seeds;
// smoke: 4 windows, 1 seed), under normal and skewed draws. The percentile
// bootstrap the evaluate stage used before, and the seed t read as if it
// covered new windows, are the controls: they must fail.

const coverageReps = 4000

// draw is a zero-mean unit-variance draw from a named distribution.
type draw func(r *rand.Rand) float64

var draws = map[string]draw{
	"normal": func(r *rand.Rand) float64 { return r.NormFloat64() },
	// gamma(4) standardised: skewness 1, like per-window losses of mixed texts.
	"skewed": func(r *rand.Rand) float64 {
		var g float64
		for range 4 {
			g -= math.Log(r.Float64())
		}
		return (g - 4) / 2
	},
}

// coverage is the share of reps whose interval (from sample) contains target.
func coverage(seed uint64, sample func(r *rand.Rand) (lo, hi, target float64)) float64 {
	r := rand.New(rand.NewPCG(seed, 0xc0))
	hit := 0
	for range coverageReps {
		lo, hi, target := sample(r)
		if lo <= target && target <= hi {
			hit++
		}
	}
	return float64(hit) / coverageReps
}

func checkCoverage(t *testing.T, what string, c float64) { checkCoverageUpTo(t, what, c, 0.97) }

// checkCoverageUpTo allows over-coverage up to hi where an interval is
// conservative by design (CrossedT's floor when the residual dominates).
func checkCoverageUpTo(t *testing.T, what string, c, hi float64) {
	t.Helper()
	t.Logf("%s: coverage %.3f", what, c)
	if c < 0.93 || c > hi {
		t.Errorf("%s: simulated coverage %.3f, want 0.93-%.2f for a 95%% interval", what, c, hi)
	}
}

func TestWindowTCoverage(t *testing.T) {
	for name, d := range draws {
		for _, n := range []int{4, 8, 64} {
			c := coverage(uint64(n), func(r *rand.Rand) (float64, float64, float64) {
				x := make([]float64, n)
				for i := range x {
					x[i] = 2 + 0.1*d(r)
				}
				e := WindowT(x)
				return e.Lo, e.Hi, 2
			})
			checkCoverage(t, fmt.Sprintf("window t, %d %s windows", n, name), c)
		}
	}
}

func TestWelchCoverage(t *testing.T) {
	for name, d := range draws {
		for _, nm := range [][2]int{{8, 1024}, {4, 512}, {8, 8}} {
			c := coverage(uint64(nm[0]*7+nm[1]), func(r *rand.Rand) (float64, float64, float64) {
				a, b := make([]float64, nm[0]), make([]float64, nm[1])
				for i := range a {
					a[i] = 2.2 + 0.05*d(r)
				}
				for i := range b {
					b[i] = 2 + 0.4*d(r) // short windows vary more
				}
				e := Welch(a, b)
				return e.Lo, e.Hi, 0.2
			})
			checkCoverage(t, fmt.Sprintf("Welch, %d vs %d %s windows", nm[0], nm[1], name), c)
		}
	}
}

// crossedMixes are seed, window and residual standard deviations: issue
// 38's C1 (seeds dominate), C2 (seeds and shared windows alike), windows
// alone, residual alone.
var crossedMixes = map[string][3]float64{
	"C1-like":     {0.46, 0.05, 0.05},
	"C2-like":     {0.054, 0.043, 0.02},
	"windows":     {0, 0.1, 0.03},
	"residual":    {0.01, 0.01, 0.1},
	"no seed eff": {0, 0.05, 0.05},
}

// crossedSample draws y[s][w] = mu + a_s + b_w + e_sw.
func crossedSample(r *rand.Rand, d draw, S, W int, sd [3]float64, mu float64) [][]float64 {
	a, b := make([]float64, S), make([]float64, W)
	for s := range a {
		a[s] = sd[0] * d(r)
	}
	for w := range b {
		b[w] = sd[1] * d(r)
	}
	y := make([][]float64, S)
	for s := range y {
		y[s] = make([]float64, W)
		for w := range y[s] {
			y[s][w] = mu + a[s] + b[w] + sd[2]*d(r)
		}
	}
	return y
}

func TestCrossedTCoverage(t *testing.T) {
	for name, d := range draws {
		for mix, sd := range crossedMixes {
			// cpu: 5 seeds x 8 windows, and 5 x 16. (At 3 seeds the
			// C2-like mix measured 0.91-0.92: the interval needs 5
			// seeds, which the v3 claims have; docs/statistics.md.)
			for _, sw := range [][2]int{{5, 8}, {5, 16}} {
				c := coverage(uint64(sw[0]*100+sw[1]), func(r *rand.Rand) (float64, float64, float64) {
					e := CrossedT(crossedSample(r, d, sw[0], sw[1], sd, -0.1))
					return e.Lo, e.Hi, -0.1
				})
				// With the residual dominant the floor max(MS_seed,
				// MS_window) binds and over-covers (~0.98): conservative,
				// stated in docs/statistics.md.
				hi := 0.97
				if mix == "residual" {
					hi = 0.99
				}
				checkCoverageUpTo(t, fmt.Sprintf("seeds x windows, %d x %d, %s, %s", sw[0], sw[1], mix, name), c, hi)
			}
		}
	}
}

// The controls: the percentile bootstrap at 2 and 8 windows, and the t
// over per-seed means (conditional on the windows) read as covering new
// windows when the windows vary, must fall below 93%.
func TestCoverageControlsFail(t *testing.T) {
	for _, n := range []int{2, 8} {
		c := coverage(uint64(n), func(r *rand.Rand) (float64, float64, float64) {
			x := make([]float64, n)
			for i := range x {
				x[i] = 2 + 0.1*r.NormFloat64()
			}
			iv := bootstrapMean(x, r.Uint64())
			return iv.Lo, iv.Hi, 2
		})
		t.Logf("percentile bootstrap, %d windows: coverage %.3f", n, c)
		if c >= 0.93 {
			t.Errorf("percentile bootstrap at %d windows covers %.3f: the control should fail (below 0.93)", n, c)
		}
	}
	c := coverage(9, func(r *rand.Rand) (float64, float64, float64) {
		y := crossedSample(r, draws["normal"], 5, 8, [3]float64{0.02, 0.1, 0.02}, -0.1)
		means := make([]float64, len(y))
		for s := range y {
			means[s] = Mean(y[s])
		}
		e := SeedsT(means)
		return e.Lo, e.Hi, -0.1
	})
	t.Logf("seeds | windows read as seeds x windows, 5 x 8, windows dominant: coverage %.3f", c)
	if c >= 0.93 {
		t.Errorf("the seed t over per-seed means covers %.3f of new windows: the control should fail", c)
	}
}

// CrossedT's arithmetic against a hand computation on a 2 x 3 table.
func TestCrossedTHand(t *testing.T) {
	y := [][]float64{{1, 2, 3}, {2, 4, 3}}
	c, m, ok := NewCrossed(y)
	if !ok || m != 2.5 {
		t.Fatalf("grand mean %v (ok %v), want 2.5", m, ok)
	}
	// row means 2, 3; column means 1.5, 3, 3.
	if !near(c.MSSeed, 3*0.5/1) || !near(c.MSWin, 2*(1+0.25+0.25)/2) {
		t.Errorf("MS seed %v window %v, want 1.5 and 1.5", c.MSSeed, c.MSWin)
	}
	// residuals: y - row - col + grand.
	res := [][]float64{{1 - 2 - 1.5 + 2.5, 2 - 2 - 3 + 2.5, 3 - 2 - 3 + 2.5}, {2 - 3 - 1.5 + 2.5, 4 - 3 - 3 + 2.5, 3 - 3 - 3 + 2.5}}
	var ss float64
	for _, r := range res {
		for _, v := range r {
			ss += v * v
		}
	}
	if !near(c.MSRes, ss/2) {
		t.Errorf("MS resid %v, want %v", c.MSRes, ss/2)
	}
	v, _ := c.Var()
	want := math.Max((c.MSSeed+c.MSWin-c.MSRes)/6, math.Max(c.MSSeed, c.MSWin)/6)
	if !near(v, want) {
		t.Errorf("variance of the mean %v, want %v", v, want)
	}
}

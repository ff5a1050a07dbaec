// Package decide turns the intervals of package stats into decisions: the
// p-value of an interval's edge test, Holm's adjustment over a family of
// claims, the power of a design by simulation, and the exact binomial test
// of a majority with its Clopper-Pearson interval. It is report-only
// arithmetic: no stage salts it except the report, so changing it never
// re-keys an evaluation (stats itself is salted into evaluate).
package decide

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"

	"routebench/internal/seeds"
	"routebench/stats"
)

// Alpha is the family-wise error rate of Holm's adjustment, and the level
// of each raw test: 1 - stats.Confidence.
const Alpha = 1 - stats.Confidence

// Side says which side of its edge a claim puts the mean.
type Side int

const (
	Below Side = -1 // the interval's upper end below the edge
	Above Side = +1 // its lower end above the edge
)

// EdgeP is the two-sided p-value of e's edge test: p < Alpha exactly when
// e's Confidence interval lies entirely on side of edge. 1 when the mean
// is on the other side; NaN when e has no interval, and when its values
// have no spread (SE 0): a zero-width interval measures no sampling
// error, so it tests nothing, and reads "not testable (no spread)" rather
// than p = 0 or 1.
func EdgeP(e stats.Estimate, edge float64, side Side) float64 {
	if math.IsNaN(e.Lo) || !(e.DF >= 1) || e.SE == 0 {
		return math.NaN()
	}
	t := float64(side) * (e.Mean - edge) / e.SE
	if t <= 0 {
		return 1
	}
	return math.Min(1, 2*distuv.StudentsT{Mu: 0, Sigma: 1, Nu: e.DF}.Survival(t))
}

// Holm returns Holm's step-down adjusted p-values, in p's order: the k-th
// smallest times (m - k + 1), made monotone. NaN entries (no test) stay
// NaN and do not count towards m.
func Holm(p []float64) []float64 {
	idx := make([]int, 0, len(p))
	for i, v := range p {
		if !math.IsNaN(v) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	out := make([]float64, len(p))
	for i := range out {
		out[i] = math.NaN()
	}
	m, run := len(idx), 0.0
	for k, i := range idx {
		run = math.Max(run, math.Min(1, float64(m-k)*p[i]))
		out[i] = run
	}
	return out
}

// Components are a crossed design's variance components (variances, log
// scale) with the degrees of freedom of the mean squares they came from,
// which set how uncertain each is.
type Components struct {
	Seed, Window, Resid       float64
	DFSeed, DFWindow, DFResid float64
}

// ComponentsOf estimates the components from a crossed table's mean
// squares (method of moments, negative estimates set to 0). With one seed
// the windows' spread is all Window; with one window, all Seed.
func ComponentsOf(c stats.Crossed) Components {
	switch {
	case c.S == 1:
		return Components{Window: c.MSWin, DFWindow: float64(c.W - 1)}
	case c.W == 1:
		return Components{Seed: c.MSSeed, DFSeed: float64(c.S - 1)}
	}
	return Components{
		Seed:   math.Max(0, (c.MSSeed-c.MSRes)/float64(c.W)),
		Window: math.Max(0, (c.MSWin-c.MSRes)/float64(c.S)),
		Resid:  c.MSRes,
		DFSeed: float64(c.S - 1), DFWindow: float64(c.W - 1), DFResid: float64((c.S - 1) * (c.W - 1)),
	}
}

// Power is the probability that a design of S seeds and W windows puts
// its interval (stats.CrossedT) on side of edge, if the true log effect is
// mu and the components are comp: by simulation (sims replications, seeded).
// Each replication first redraws the components from their sampling
// distributions (a variance estimated on df degrees of freedom is the true
// one times chi2(df)/df, inverted), so the power averages over how
// uncertain the few seeds make the spread, as the pre-registration asks
// (docs/statistics.md, claims v3).
func Power(mu float64, comp Components, S, W int, edge float64, side Side, sims int, seed uint64) float64 {
	r := seeds.Rand(seed, seeds.Power)
	hit := 0
	y := make([][]float64, S)
	for s := range y {
		y[s] = make([]float64, W)
	}
	a, b := make([]float64, S), make([]float64, W)
	for range sims {
		vs, vw, ve := redraw(r, comp.Seed, comp.DFSeed), redraw(r, comp.Window, comp.DFWindow), redraw(r, comp.Resid, comp.DFResid)
		for s := range a {
			a[s] = math.Sqrt(vs) * r.NormFloat64()
		}
		for w := range b {
			b[w] = math.Sqrt(vw) * r.NormFloat64()
		}
		for s := range y {
			for w := range y[s] {
				y[s][w] = mu + a[s] + b[w] + math.Sqrt(ve)*r.NormFloat64()
			}
		}
		e := stats.CrossedT(y)
		if (side == Below && e.Hi < edge) || (side == Above && e.Lo > edge) {
			hit++
		}
	}
	return float64(hit) / float64(sims)
}

// redraw is a variance v estimated on df degrees of freedom, redrawn as
// v df / chi2(df): a draw from its (scaled inverse chi-square) uncertainty.
func redraw(r *rand.Rand, v, df float64) float64 {
	if v == 0 || !(df >= 1) {
		return v
	}
	var c float64
	if df > 200 { // chi2(df) ~ normal(df, 2 df): the sum below would cost df draws
		c = df + math.Sqrt(2*df)*r.NormFloat64()
	} else {
		for k := 0.0; k < df; k++ { // chi2(df) for integer df
			z := r.NormFloat64()
			c += z * z
		}
	}
	return v * df / math.Max(c, 1e-12)
}

// PowerSims is the replication count of the report's power figures: the
// Monte Carlo error of a power near 0.8 is then under 1.3 points.
const PowerSims = 1000

// Target is the power the profiles are sized for.
const Target = 0.8

// SeedsFor is the smallest seed count (2..max) whose Power reaches Target
// with W windows; max+1 when none does.
func SeedsFor(mu float64, comp Components, W int, edge float64, side Side, max int, seed uint64) int {
	for S := 2; S <= max; S++ {
		if Power(mu, comp, S, W, edge, side, PowerSims, seed) >= Target {
			return S
		}
	}
	return max + 1
}

// WindowsFor is the smallest window count (2..max) whose Power reaches
// Target with S seeds; max+1 when none does.
func WindowsFor(mu float64, comp Components, S int, edge float64, side Side, max int, seed uint64) int {
	for W := 2; W <= max; W *= 2 {
		if Power(mu, comp, S, W, edge, side, PowerSims, seed) >= Target {
			return W
		}
	}
	return max + 1
}

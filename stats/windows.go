package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Estimate is a mean with its standard error and degrees of freedom, and
// the Confidence t interval they give: the one shape every interval of the
// claims v3 takes (docs/statistics.md), so that its edge test (EdgeP) and
// its power (Power) read the same numbers as the interval printed.
type Estimate struct {
	Mean, SE, DF float64
	Lo, Hi       float64
	// Covers says what the interval is over: "windows", "seeds | windows",
	// "seeds x windows".
	Covers string
}

// Interval is the estimate as an Interval on its own scale.
func (e Estimate) Interval() Interval { return Interval{Value: e.Mean, Lo: e.Lo, Hi: e.Hi} }

// Exp is the estimate mapped back from the log scale (a ratio).
func (e Estimate) Exp() Interval { return expInterval(e) }

func expInterval(e Estimate) Interval {
	return Interval{Value: math.Exp(e.Mean), Lo: math.Exp(e.Lo), Hi: math.Exp(e.Hi)}
}

// tQuantileDF is the two-sided Confidence quantile of Student's t with df
// (real) degrees of freedom.
func tQuantileDF(df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-Confidence)/2)
}

// estimate fills the interval of mean, se, df; NaN bounds where there is
// no spread to estimate (df < 1 or se NaN).
func estimate(mean, se, df float64, covers string) Estimate {
	e := Estimate{Mean: mean, SE: se, DF: df, Lo: math.NaN(), Hi: math.NaN(), Covers: covers}
	if df >= 1 && !math.IsNaN(se) {
		h := tQuantileDF(df) * se
		e.Lo, e.Hi = mean-h, mean+h
	}
	return e
}

// variance is the sample variance (n - 1) of x around its mean m.
func variance(x []float64, m float64) float64 {
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return s / float64(len(x)-1)
}

// WindowT is the mean of x (one value per window) with its Student-t
// interval over windows, n - 1 degrees of freedom. With one window there
// is no interval (NaN bounds).
func WindowT(x []float64) Estimate {
	n := float64(len(x))
	m := Mean(x)
	if len(x) < 2 {
		return estimate(m, math.NaN(), 0, "windows")
	}
	return estimate(m, math.Sqrt(variance(x, m)/n), n-1, "windows")
}

// Welch is mean(a) - mean(b) for independent samples a and b with the
// Welch-Satterthwaite t interval (unequal variances and counts).
func Welch(a, b []float64) Estimate {
	ma, mb := Mean(a), Mean(b)
	if len(a) < 2 || len(b) < 2 {
		return estimate(ma-mb, math.NaN(), 0, "windows")
	}
	va, vb := variance(a, ma)/float64(len(a)), variance(b, mb)/float64(len(b))
	v := va + vb
	df := v * v / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	if v == 0 {
		df = float64(len(a) + len(b) - 2)
	}
	return estimate(ma-mb, math.Sqrt(v), df, "windows")
}

// SeedsT is the t interval over seeds of per-seed values (each seed's
// mean over the same windows): "seeds | windows", conditional on the
// windows when every seed shares them.
func SeedsT(x []float64) Estimate {
	e := WindowT(x)
	e.Covers = "seeds | windows"
	return e
}

// Crossed is a crossed two-way random-effects design, y[s][w] for seeds s
// and windows w shared by every seed: y = mu + a_s + b_w + e_sw.
type Crossed struct {
	S, W                 int
	MSSeed, MSWin, MSRes float64 // ANOVA mean squares
}

// NewCrossed checks the table's shape and computes its mean squares.
func NewCrossed(y [][]float64) (Crossed, float64, bool) {
	S := len(y)
	if S == 0 || len(y[0]) == 0 {
		return Crossed{}, math.NaN(), false
	}
	W := len(y[0])
	for _, r := range y {
		if len(r) != W {
			return Crossed{}, math.NaN(), false
		}
	}
	rows, cols := make([]float64, S), make([]float64, W)
	var grand float64
	for s, r := range y {
		for w, v := range r {
			rows[s] += v / float64(W)
			cols[w] += v / float64(S)
			grand += v
		}
	}
	grand /= float64(S * W)
	c := Crossed{S: S, W: W}
	var ss, sw, se float64
	for s := range rows {
		ss += (rows[s] - grand) * (rows[s] - grand)
	}
	for w := range cols {
		sw += (cols[w] - grand) * (cols[w] - grand)
	}
	for s, r := range y {
		for w, v := range r {
			d := v - rows[s] - cols[w] + grand
			se += d * d
		}
	}
	if S > 1 {
		c.MSSeed = float64(W) * ss / float64(S-1)
	}
	if W > 1 {
		c.MSWin = float64(S) * sw / float64(W-1)
	}
	if S > 1 && W > 1 {
		c.MSRes = se / float64((S-1)*(W-1))
	}
	return c, grand, true
}

// Var is the variance of the grand mean and its Satterthwaite degrees of
// freedom: (MS_seed + MS_window - MS_resid) / (S W), floored at the larger
// main effect's own share max(MS_seed, MS_window) / (S W) (then that mean
// square's degrees of freedom).
func (c Crossed) Var() (v, df float64) {
	n := float64(c.S * c.W)
	fs, fw, fe := float64(c.S-1), float64(c.W-1), float64((c.S-1)*(c.W-1))
	v = (c.MSSeed + c.MSWin - c.MSRes) / n
	floor, fdf := c.MSSeed/n, fs
	if c.MSWin > c.MSSeed {
		floor, fdf = c.MSWin/n, fw
	}
	if v <= floor {
		return floor, fdf
	}
	den := c.MSSeed * c.MSSeed / fs
	den += c.MSWin * c.MSWin / fw
	den += c.MSRes * c.MSRes / fe
	return v, (v * n) * (v * n) / den
}

// CrossedT is the grand mean of y[s][w] (seeds x shared windows) with the
// t interval of the crossed two-way model (Crossed.Var): it covers a new
// seed and a new window ("seeds x windows"). One seed: the window t; one
// window: the seed t.
func CrossedT(y [][]float64) Estimate {
	c, m, ok := NewCrossed(y)
	switch {
	case !ok:
		return estimate(math.NaN(), math.NaN(), 0, "seeds x windows")
	case c.S == 1 && c.W == 1:
		return estimate(m, math.NaN(), 0, "seeds")
	case c.S == 1:
		return WindowT(y[0])
	case c.W == 1:
		col := make([]float64, c.S)
		for s := range y {
			col[s] = y[s][0]
		}
		e := WindowT(col)
		e.Covers = "seeds"
		return e
	}
	v, df := c.Var()
	return estimate(m, math.Sqrt(v), df, "seeds x windows")
}

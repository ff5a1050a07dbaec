package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Spread is a statistic over training seeds.
type Spread struct {
	N    int     `json:"n"`    // seeds
	Mean float64 `json:"mean"` // mean of the per-seed values
	SD   float64 `json:"sd"`   // sample standard deviation (n-1); 0 for one seed
	// Lo and Hi bound a Confidence Student-t interval for the mean:
	// Mean -+ t(n-1) SD / sqrt(n). With one seed there is no interval and
	// both are NaN (PairedOverSeeds fills them from the window bootstrap).
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Interval is the spread as an Interval (value, lo, hi).
func (s Spread) Interval() Interval { return Interval{Value: s.Mean, Lo: s.Lo, Hi: s.Hi} }

// TQuantile is the two-sided Confidence quantile of Student's t with n-1
// degrees of freedom (n >= 2).
func TQuantile(n int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - (1-Confidence)/2)
}

// OverSeeds is the mean of x (one value per seed) with its t-interval.
func OverSeeds(x []float64) Spread {
	s := Spread{N: len(x), Lo: math.NaN(), Hi: math.NaN()}
	if s.N == 0 {
		s.Mean = math.NaN()
		return s
	}
	s.Mean = Mean(x)
	if s.N == 1 {
		return s
	}
	for _, v := range x {
		s.SD += (v - s.Mean) * (v - s.Mean)
	}
	s.SD = math.Sqrt(s.SD / float64(s.N-1))
	half := TQuantile(s.N) * s.SD / math.Sqrt(float64(s.N))
	s.Lo, s.Hi = s.Mean-half, s.Mean+half
	return s
}

// GeoOverSeeds is OverSeeds on the log scale for positive x: Mean is the
// geometric mean, Lo and Hi the t-interval of log x mapped back by exp
// (so Lo > 0 and Lo <= Mean <= Hi), SD the standard deviation of log x.
// A value <= 0 gives NaNs: a PPL or ratio is never one. Perplexities and
// their ratios are positive and scale multiplicatively, so they combine on
// the log scale; the linear interval of 2 or 3 seeds can reach below 0.
func GeoOverSeeds(x []float64) Spread {
	logs := make([]float64, len(x))
	for i, v := range x {
		if v <= 0 {
			return Spread{N: len(x), Mean: math.NaN(), SD: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
		}
		logs[i] = math.Log(v)
	}
	s := OverSeeds(logs)
	s.Mean, s.Lo, s.Hi = math.Exp(s.Mean), math.Exp(s.Lo), math.Exp(s.Hi)
	return s
}

package stats

import (
	"fmt"
	"math"
)

// Paired statistics: two measurements on the same windows (a window's loss
// over all L positions and over its own first T; or two models' losses on
// one window) are compared window by window, so the windows' own
// difficulty, which moves both alike, cancels. The interval is the t over
// windows of the per-window differences.

// PairedRatioInterval is exp(mean over windows of (a_w - b_w)) with the
// t interval over windows of the differences (WindowT): for a = each
// window's mean loss over its L positions and b = over its first T, it is
// the paired prefix ratio PPL(L)/PPL(T) on the same windows; for a and b
// two models' mean losses on the same windows, their PPL ratio. a and b
// must be equally long (one entry per window).
func PairedRatioInterval(a, b []float64) (Interval, error) {
	d, err := Differences(a, b)
	if err != nil {
		return Interval{}, err
	}
	return expInterval(WindowT(d)), nil
}

// Differences is a_w - b_w per window.
func Differences(a, b []float64) ([]float64, error) {
	if len(a) != len(b) || len(a) == 0 {
		return nil, fmt.Errorf("stats: a paired comparison needs the same windows on both sides (%d vs %d windows)", len(a), len(b))
	}
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return d, nil
}

// PairedOverSeeds combines per-seed paired log-differences: perSeed[s] is
// seed s's per-window differences (nats, a_w - b_w on the same windows).
// Each seed's mean over its windows is one observation; the result is the
// geometric mean of exp(those means) with the log-scale t-interval over
// seeds (GeoOverSeeds on the exponentiated means).
//
// Why a t over seeds of per-seed paired means rather than a bootstrap over
// windows within seeds: every model is evaluated on the same windows, so
// window noise is shared across seeds and across models; training noise
// (the seed) is the variation a reproduction must survive, and a t over
// seeds measures exactly that, given these windows ("seeds | windows");
// CrossedT covers new windows as well. With one seed there is no seed
// spread: the window t (PairedRatioInterval) is then the only interval.
func PairedOverSeeds(perSeed [][]float64) (Spread, error) {
	if len(perSeed) == 0 {
		return Spread{}, fmt.Errorf("stats: a paired comparison over seeds needs at least one seed")
	}
	if len(perSeed) == 1 {
		d := perSeed[0]
		zero := make([]float64, len(d))
		iv, err := PairedRatioInterval(d, zero)
		if err != nil {
			return Spread{}, err
		}
		return Spread{N: 1, Mean: iv.Value, Lo: iv.Lo, Hi: iv.Hi}, nil
	}
	means := make([]float64, len(perSeed))
	for s, d := range perSeed {
		if len(d) == 0 {
			return Spread{}, fmt.Errorf("stats: seed %d of a paired comparison has no windows", s)
		}
		means[s] = math.Exp(Mean(d))
	}
	return GeoOverSeeds(means), nil
}

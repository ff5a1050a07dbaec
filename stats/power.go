package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Power at 80%: how large an effect the current seeds (or windows) detect
// four times in five, and how many would detect one that the interval
// straddles. The effect a two-sided t test on n values detects with power
// P is about (t(1-a/2, n-1) + t(P, n-1)) sd / sqrt(n) (the noncentral t
// read with a central quantile), with the observed sd held fixed: a
// planning figure, not a guarantee (the next seeds' sd will differ; the v3
// claims' power, stats/decide, averages over that uncertainty).

// PowerTarget is the power the planning figures are stated at.
const PowerTarget = 0.8

// MaxSeeds bounds SeedsToSettle's search; beyond it the answer is "more
// than MaxSeeds" (returned as MaxSeeds+1).
const MaxSeeds = 1000

// DetectableLogEffect is the smallest |log effect| that n observations
// with standard deviation sd (of the logs) detect with PowerTarget power
// at the Confidence level. NaN for n < 2.
func DetectableLogEffect(sd float64, n int) float64 {
	if n < 2 {
		return math.NaN()
	}
	tp := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(PowerTarget)
	return (TQuantile(n) + tp) * sd / math.Sqrt(float64(n))
}

// SeedsToSettle is the smallest n (>= 2) that detects a log effect of
// distance (|log estimate - log threshold|) with PowerTarget power, if the
// observed sd held. MaxSeeds+1 when none up to MaxSeeds does; 2 when sd is 0.
func SeedsToSettle(sd, distance float64) int {
	if sd == 0 {
		return 2
	}
	for n := 2; n <= MaxSeeds; n++ {
		if DetectableLogEffect(sd, n) < distance {
			return n
		}
	}
	return MaxSeeds + 1
}

// WindowsToSettle is how many windows would detect a log effect of
// distance with PowerTarget power, given a window t interval of log
// half-width h from w windows (its per-window sd is h sqrt(w) / t(w)).
func WindowsToSettle(h, distance float64, w int) int {
	if w < 2 {
		return MaxSeeds + 1
	}
	return SeedsToSettle(h*math.Sqrt(float64(w))/TQuantile(w), distance)
}

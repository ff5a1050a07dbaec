package stats

import "math"

// Power: how large an effect the current seeds (or windows) can settle,
// and how many would settle one that the interval straddles. Both read
// the log-scale half-width of a t-interval, t(n-1) sd / sqrt(n), with the
// observed sd held fixed: a planning figure, not a guarantee (the next
// seeds' sd will differ).

// MaxSeeds bounds SeedsToSettle's search; beyond it the answer is "more
// than MaxSeeds" (returned as MaxSeeds+1).
const MaxSeeds = 1000

// DetectableLogEffect is the smallest |log effect| that n observations
// with standard deviation sd (of the logs) put outside a Confidence
// t-interval around it: the interval's half-width. NaN for n < 2.
func DetectableLogEffect(sd float64, n int) float64 {
	if n < 2 {
		return math.NaN()
	}
	return TQuantile(n) * sd / math.Sqrt(float64(n))
}

// SeedsToSettle is the smallest n (>= 2) whose t-interval half-width,
// with the observed sd, is below distance (|log estimate - log
// threshold|), so that the interval no longer straddles the threshold if
// the estimate held. MaxSeeds+1 when none up to MaxSeeds does; 2 when
// sd is 0.
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

// WindowsToSettle is how many windows would shrink a window bootstrap
// interval of log half-width h (from w windows) below distance, if the
// per-window spread held: the half-width scales as 1/sqrt(windows).
func WindowsToSettle(h, distance float64, w int) int {
	if h < distance {
		return w
	}
	return int(math.Ceil(float64(w) * (h / distance) * (h / distance)))
}

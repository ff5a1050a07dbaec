package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Interval is a point estimate with its Confidence interval.
type Interval struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// String renders "1.23 [1.20, 1.26]".
func (i Interval) String() string { return fmt.Sprintf("%.3f [%.3f, %.3f]", i.Value, i.Lo, i.Hi) }

// Straddles reports whether x lies inside the interval (edges excluded):
// neither "above x" nor "below x" is settled.
func (i Interval) Straddles(x float64) bool { return i.Lo < x && x < i.Hi }

// Mean is the arithmetic mean of x (NaN for none).
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// PPL is the perplexity of windows given their mean losses (nats/token):
// each window weighs the same, as every window of a length has the same
// number of scored positions.
func PPL(windowLoss []float64) float64 { return math.Exp(Mean(windowLoss)) }

// resampledMeans draws BootstrapResamples means of x with replacement.
func resampledMeans(x []float64, r *rand.Rand) []float64 {
	out := make([]float64, BootstrapResamples)
	for b := range out {
		s := 0.0
		for range x {
			s += x[r.IntN(len(x))]
		}
		out[b] = s / float64(len(x))
	}
	return out
}

// Percentile is the q-quantile of sorted values, linearly interpolated
// between order statistics (numpy's default, "linear").
func Percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	f := pos - float64(lo)
	return sorted[lo]*(1-f) + sorted[hi]*f
}

// percentileInterval is value with the central Confidence range of draws.
func percentileInterval(value float64, draws []float64) Interval {
	sort.Float64s(draws)
	a := (1 - Confidence) / 2
	return Interval{Value: value, Lo: Percentile(draws, a), Hi: Percentile(draws, 1-a)}
}

// PPLInterval is the perplexity of the windows with a bootstrap interval
// over windows.
func PPLInterval(windowLoss []float64, seed uint64) Interval {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	draws := resampledMeans(windowLoss, r)
	for i := range draws {
		draws[i] = math.Exp(draws[i])
	}
	return percentileInterval(PPL(windowLoss), draws)
}

// RatioInterval is PPL(long)/PPL(base) with a bootstrap interval that
// resamples the windows of both lengths independently (they are different
// windows): the paper's ratio.
func RatioInterval(long, base []float64, seed uint64) Interval {
	r := rand.New(rand.NewPCG(seed, 0x7a710))
	dl := resampledMeans(long, r)
	db := resampledMeans(base, r)
	draws := make([]float64, len(dl))
	for i := range draws {
		draws[i] = math.Exp(dl[i] - db[i])
	}
	return percentileInterval(PPL(long)/PPL(base), draws)
}

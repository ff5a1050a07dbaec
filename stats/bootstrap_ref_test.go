package stats

import (
	"math"
	"math/rand/v2"
	"sort"
)

// The percentile bootstrap over windows, as the evaluate stage used it
// before claims v3: kept here only as the control that coverage_test.go
// shows failing at the window counts the profiles use.

// BootstrapResamples is the resample count the evaluate stage used.
const bootstrapResamples = 2000

// resampledMeans draws bootstrapResamples means of x with replacement.
func resampledMeans(x []float64, r *rand.Rand) []float64 {
	out := make([]float64, bootstrapResamples)
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

// bootstrapMean is the percentile bootstrap interval of mean(x).
func bootstrapMean(x []float64, seed uint64) Interval {
	return percentileInterval(Mean(x), resampledMeans(x, rand.New(rand.NewPCG(seed, 0x5eed))))
}

package evaluate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Bootstrap settings: enough resamples that the percentile interval's own
// Monte Carlo error (~0.5% of its width) is negligible.
const (
	BootstrapResamples = 2000
	Confidence         = 0.95
)

// Interval is a point estimate with a percentile bootstrap interval.
type Interval struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// String renders "1.23 [1.20, 1.26]".
func (i Interval) String() string { return fmt.Sprintf("%.3f [%.3f, %.3f]", i.Value, i.Lo, i.Hi) }

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// ppl is the perplexity of windows given their mean losses (nats/token):
// each window weighs the same, as every window has the same length.
func ppl(windowLoss []float64) float64 { return math.Exp(mean(windowLoss)) }

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

func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	f := pos - float64(lo)
	return sorted[lo]*(1-f) + sorted[hi]*f
}

func intervalOf(value float64, draws []float64) Interval {
	sort.Float64s(draws)
	a := (1 - Confidence) / 2
	return Interval{Value: value, Lo: percentile(draws, a), Hi: percentile(draws, 1-a)}
}

// PPLInterval is the perplexity of the windows with a bootstrap interval
// over windows.
func PPLInterval(windowLoss []float64, seed uint64) Interval {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	draws := resampledMeans(windowLoss, r)
	for i := range draws {
		draws[i] = math.Exp(draws[i])
	}
	return intervalOf(ppl(windowLoss), draws)
}

// RatioInterval is PPL(long)/PPL(base) with a bootstrap interval that
// resamples the windows of both lengths independently (they are different
// windows).
func RatioInterval(long, base []float64, seed uint64) Interval {
	r := rand.New(rand.NewPCG(seed, 0x7a710))
	dl := resampledMeans(long, r)
	db := resampledMeans(base, r)
	draws := make([]float64, len(dl))
	for i := range draws {
		draws[i] = math.Exp(dl[i] - db[i])
	}
	return intervalOf(ppl(long)/ppl(base), draws)
}

// Bucket is the mean loss over positions [Start, End) of all windows.
type Bucket struct {
	Start int     `json:"start"`
	End   int     `json:"end"`
	Loss  float64 `json:"loss"`
}

// PositionBuckets averages per-position losses (window x position) into
// buckets [0,T), [T,2T), [2T,4T), ...: where a model starts to fail shows
// as the first bucket whose loss rises.
func PositionBuckets(losses [][]float32, T int) []Bucket {
	if len(losses) == 0 {
		return nil
	}
	L := len(losses[0])
	var out []Bucket
	for start, end := 0, T; start < L; start, end = end, 2*end {
		if end > L {
			end = L
		}
		s, n := 0.0, 0
		for _, w := range losses {
			for _, v := range w[start:end] {
				s += float64(v)
				n++
			}
		}
		out = append(out, Bucket{Start: start, End: end, Loss: s / float64(n)})
	}
	return out
}

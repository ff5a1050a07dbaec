package theory

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// moments accumulates a sample mean and its standard error.
type moments struct {
	n, sum, sumSq float64
}

func (m *moments) add(x float64)   { m.n++; m.sum += x; m.sumSq += x * x }
func (m *moments) merge(o moments) { m.n += o.n; m.sum += o.sum; m.sumSq += o.sumSq }
func (m moments) mean() float64 {
	if m.n == 0 {
		return 0
	}
	return m.sum / m.n
}

// se is the standard error of the mean (sample sd / sqrt n).
func (m moments) se() float64 {
	if m.n < 2 {
		return 0
	}
	mu := m.mean()
	v := (m.sumSq - m.n*mu*mu) / (m.n - 1)
	if v < 0 {
		v = 0 // rounding when every sample is equal
	}
	return math.Sqrt(v / m.n)
}

// bonferroniZ is the two-sided normal quantile that keeps the family-wise
// error of m simultaneous comparisons at alpha.
func bonferroniZ(alpha float64, m int) float64 {
	if m < 1 {
		m = 1
	}
	return distuv.UnitNormal.Quantile(1 - alpha/(2*float64(m)))
}

// ksCritical is the asymptotic Kolmogorov-Smirnov critical value
// c(alpha) * sqrt((n+m)/(n m)); m = 0 means a one-sample test.
func ksCritical(alpha float64, n, m int) float64 {
	c := math.Sqrt(-math.Log(alpha/2) / 2)
	if m == 0 {
		return c / math.Sqrt(float64(n))
	}
	return c * math.Sqrt(float64(n+m)/float64(n*m))
}

// ksOneSample is sup |F_n - F| for sorted samples.
func ksOneSample(sorted []float64, cdf func(float64) float64) float64 {
	n := float64(len(sorted))
	d := 0.0
	for i, x := range sorted {
		f := cdf(x)
		d = math.Max(d, math.Max(f-float64(i)/n, float64(i+1)/n-f))
	}
	return d
}

// ksTwoSample is sup |F_a - F_b| for sorted samples.
func ksTwoSample(a, b []float64) float64 {
	i, j, d := 0, 0, 0.0
	na, nb := float64(len(a)), float64(len(b))
	for i < len(a) && j < len(b) {
		x := math.Min(a[i], b[j])
		for i < len(a) && a[i] <= x {
			i++
		}
		for j < len(b) && b[j] <= x {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/na-float64(j)/nb))
	}
	return d
}

// tailAbove counts samples with |x| > t in a sample sorted by |x|.
func tailAbove(sortedAbs []float64, t float64) int {
	k := sort.SearchFloat64s(sortedAbs, math.Nextafter(t, math.Inf(1)))
	return len(sortedAbs) - k
}

// opNorm is the spectral norm (largest singular value), via gonum's SVD.
func opNorm(a mat.Matrix) float64 {
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDNone) {
		return math.NaN()
	}
	return svd.Values(nil)[0]
}

// slopeLogLog is the least-squares slope of log y against log x.
func slopeLogLog(x, y []float64) float64 {
	var sx, sy, sxx, sxy, n float64
	for i := range x {
		if x[i] <= 0 || y[i] <= 0 {
			continue
		}
		lx, ly := math.Log(x[i]), math.Log(y[i])
		sx += lx
		sy += ly
		sxx += lx * lx
		sxy += lx * ly
		n++
	}
	if n < 2 {
		return math.NaN()
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

// finiteOr0 maps NaN and Inf to 0 so that results stay JSON-encodable; the
// fields that use it document that 0 means "not available".
func finiteOr0(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

package decide

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"routebench/stats"
)

// The one-sided exact binomial test of H0: P(success) <= 1/2 (claim
// v4m2's M3': more than half of a model's units agree with their
// prediction), and the Clopper-Pearson interval of the success fraction
// beside it.

// BinomialHalfP is P(Bin(n, 1/2) >= k), the test's p for k successes in n
// trials: exact, summed from the largest term down in log space so that
// n in the thousands neither overflows nor underflows. NaN for n < 1 or k
// outside [0, n].
func BinomialHalfP(k, n int) float64 {
	if n < 1 || k < 0 || k > n {
		return math.NaN()
	}
	lnHalf := float64(n) * math.Log(0.5)
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	var p float64
	for i := k; i <= n; i++ {
		p += math.Exp(lg(n) - lg(i) - lg(n-i) + lnHalf)
	}
	return math.Min(p, 1)
}

// ClopperPearson is the exact two-sided stats.Confidence interval of a
// success fraction k / n, Covers naming the trials (what).
func ClopperPearson(k, n int, what string) stats.Estimate {
	e := stats.Estimate{Mean: float64(k) / float64(n), Lo: 0, Hi: 1, SE: math.NaN(), DF: math.NaN(), Covers: what}
	a := (1 - stats.Confidence) / 2
	if k > 0 {
		e.Lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(a)
	}
	if k < n {
		e.Hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a)
	}
	return e
}

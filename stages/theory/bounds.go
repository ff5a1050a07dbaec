package theory

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// farMassBound is the paper's lower bound on the far softmax mass with K near
// sources, m far sources and logits in [-lambda, lambda]:
// every far weight is at least e^-lambda, every near one at most e^lambda, so
// rho_D >= m e^-lambda / (m e^-lambda + K e^lambda) = m / (m + K e^{2 lambda}).
func farMassBound(m, k int, lambda float64) (float64, error) {
	switch {
	case k <= 0:
		return 0, fmt.Errorf("theory: far-mass bound: K=%d near sources; K must be >= 1 (with K=0 all mass is far)", k)
	case m < 0:
		return 0, fmt.Errorf("theory: far-mass bound: M=%d far sources is negative", m)
	case !(lambda >= 0) || math.IsInf(lambda, 0):
		return 0, fmt.Errorf("theory: far-mass bound: lambda=%v must be finite and >= 0", lambda)
	}
	// Written with e^{-2 lambda} so that large lambda underflows to 0 instead of Inf/Inf.
	mf := float64(m)
	return mf * math.Exp(-2*lambda) / (mf*math.Exp(-2*lambda) + float64(k)), nil
}

// alibiFarMassBound bounds the far mass from above when logits are
// lambda*c_n - slope*n with |c_n| <= 1, near sources at distances 1..K and
// far sources at distances > K, for any number of far sources:
// far <= e^lambda sum_{n>K} e^{-slope n}, near >= e^-lambda sum_{n<=K} e^{-slope n}.
func alibiFarMassBound(k int, lambda, slope float64) float64 {
	q := math.Exp(-slope)
	far := math.Exp(lambda) * math.Pow(q, float64(k+1)) / (1 - q)
	near := math.Exp(-lambda) * q * (1 - math.Pow(q, float64(k))) / (1 - q)
	return far / (far + near)
}

// levyBound is the spherical-cap bound (Levy's concentration on the sphere,
// in the form of Ball, "An elementary introduction to modern convex
// geometry", Lemma 2.2): for x uniform on S^{d-1}, P(x_1 >= t) <= e^{-d t^2/2}.
// For Haar Q and unit q, k, q^T Q k is distributed as x_1, hence
// P(|q^T Q k| >= t) <= 2 e^{-d t^2/2}.
func levyBound(d int, t float64) float64 {
	return math.Min(1, 2*math.Exp(-float64(d)*t*t/2))
}

// hoeffdingBound is Hoeffding's inequality for X = (2/d) sum_{b<d/2} cos(phi_b)
// (a flat query against itself through block SO(2) transport, independent
// block angles): each term lies in an interval of width 4/d, so
// P(|X - E X| >= s) <= 2 exp(-2 s^2 / ((d/2)(4/d)^2)) = 2 exp(-d s^2/4).
// shift bounds |E X| (zero in the Haar limit); the tail at t uses s = t - shift.
func hoeffdingBound(d int, t, shift float64) float64 {
	s := t - shift
	if s <= 0 {
		return 1
	}
	return math.Min(1, 2*math.Exp(-float64(d)*s*s/4))
}

// haarTail is the exact P(|x_1| > t) for x uniform on S^{d-1}: (1+x_1)/2 is
// Beta((d-1)/2, (d-1)/2).
func haarTail(d int, t float64) float64 {
	if t >= 1 {
		return 0
	}
	b := distuv.Beta{Alpha: float64(d-1) / 2, Beta: float64(d-1) / 2}
	return 2 * b.Survival((1+t)/2)
}

// haarCDF is the CDF of x_1 for x uniform on S^{d-1}.
func haarCDF(d int) func(float64) float64 {
	b := distuv.Beta{Alpha: float64(d-1) / 2, Beta: float64(d-1) / 2}
	return func(x float64) float64 {
		switch {
		case x <= -1:
			return 0
		case x >= 1:
			return 1
		}
		return b.CDF((1 + x) / 2)
	}
}

// predictedWindow is the smallest n with rho^n < eps: the mixing window the
// spectral gap predicts. ok is false when rho >= 1 (no gap, no window).
func predictedWindow(rho, eps float64) (n int, ok bool) {
	if rho >= 1 || math.IsNaN(rho) {
		return 0, false
	}
	if rho < eps {
		return 1, true
	}
	n = int(math.Floor(math.Log(eps)/math.Log(rho))) + 1
	for n > 1 && math.Pow(rho, float64(n-1)) < eps { // guard against rounding in the logs
		n--
	}
	for math.Pow(rho, float64(n)) >= eps {
		n++
	}
	return n, true
}

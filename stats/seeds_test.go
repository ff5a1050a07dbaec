package stats

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// The spread over seeds against a hand computation: mean, sample sd
// (n-1) and mean -+ t(0.975, n-1) sd / sqrt(n), with t(0.975, 2) =
// 4.302653 and t(0.975, 1) = 12.706205 from a t table.
func TestOverSeedsByHand(t *testing.T) {
	s := OverSeeds([]float64{1.2, 1.4, 1.3})
	// sd = sqrt((0.01 + 0.01 + 0) / 2) = 0.1; half = 4.302653 * 0.1 / sqrt(3) = 0.248414
	if s.N != 3 || !near(s.Mean, 1.3) || !near(s.SD, 0.1) || !near(s.Lo, 1.3-0.248414) || !near(s.Hi, 1.3+0.248414) {
		t.Fatalf("OverSeeds(1.2, 1.4, 1.3) = %+v; want mean 1.3, sd 0.1, [1.051586, 1.548414]", s)
	}
	s = OverSeeds([]float64{1, 2})
	// sd = sqrt(0.5) = 0.707107; half = 12.706205 * 0.707107 / sqrt(2) = 6.353102
	if !near(s.Mean, 1.5) || !near(s.SD, math.Sqrt(0.5)) || !near(s.Lo, 1.5-6.353102) || !near(s.Hi, 1.5+6.353102) {
		t.Fatalf("OverSeeds(1, 2) = %+v; want mean 1.5, [-4.853102, 7.853102]", s)
	}
	if s := OverSeeds([]float64{1.7}); s.Mean != 1.7 || s.SD != 0 || !math.IsNaN(s.Lo) || !math.IsNaN(s.Hi) {
		t.Fatalf("one seed: %+v; want the value and no interval", s)
	}
}

// GeoOverSeeds by hand: logs of (1, e^2) are (0, 2), mean 1, sd sqrt 2,
// t(1, 0.975) = 12.7062047: the interval exp(1 -+ 12.7062047), positive
// where OverSeeds(1, e^2) reaches below 0; a non-positive value is NaN.
func TestGeoOverSeedsByHand(t *testing.T) {
	x := []float64{1, math.Exp(2)}
	s := GeoOverSeeds(x)
	half := 12.706204736174698 * math.Sqrt(2) / math.Sqrt(2)
	if math.Abs(s.Mean-math.E) > 1e-12 || math.Abs(s.Lo-math.Exp(1-half)) > 1e-12 || math.Abs(s.Hi-math.Exp(1+half)) > 1e-6*math.Exp(1+half) {
		t.Fatalf("GeoOverSeeds(1, e^2) = %+v; want mean e, [exp(1-%g), exp(1+%g)]", s, half, half)
	}
	if lin := OverSeeds(x); lin.Lo >= 0 || s.Lo <= 0 {
		t.Fatalf("linear lo %g (want < 0 here), log-scale lo %g (want > 0)", lin.Lo, s.Lo)
	}
	if s := GeoOverSeeds([]float64{1.2, 0}); !math.IsNaN(s.Mean) || !math.IsNaN(s.Lo) {
		t.Fatalf("GeoOverSeeds with a 0: %+v, want NaNs", s)
	}
	if s := GeoOverSeeds([]float64{1.7}); s.Mean != 1.7 || !math.IsNaN(s.Lo) {
		t.Fatalf("one seed: %+v", s)
	}
}

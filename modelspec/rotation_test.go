package modelspec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSincosMatchesSinCos: RotationCosSinInto takes cos and sin from one
// math.Sincos call, which must be bit for bit math.Cos and math.Sin (the
// trainers' earlier values and the gomlx model's) on the reduced angles it
// sees, [-pi, pi], the ends and the reduction's octant edges included.
func TestSincosMatchesSinCos(t *testing.T) {
	n := 5_000_000
	if testing.Short() {
		n = 200_000
	}
	xs := []float64{0, math.Copysign(0, -1), math.Pi, -math.Pi, math.Pi / 4, -math.Pi / 4, math.Pi / 2, 3 * math.Pi / 4, 1e-300, -1e-9}
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < n; i++ {
		x := (2*r.Float64() - 1) * math.Pi
		if i%4 == 0 {
			x = ReduceAngle(r.NormFloat64() * 1e4) // as accumulated angles arrive
		}
		xs = append(xs, x)
	}
	for _, x := range xs {
		s, c := math.Sincos(x)
		if math.Float64bits(s) != math.Float64bits(math.Sin(x)) || math.Float64bits(c) != math.Float64bits(math.Cos(x)) {
			t.Fatalf("Sincos(%v) = %v, %v; Sin, Cos = %v, %v", x, s, c, math.Sin(x), math.Cos(x))
		}
	}
}

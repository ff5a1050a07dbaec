package nativeeval

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestProjectedAnglesPrecision: learned-proj-qkv's per-layer prefix sums
// over 65,536 positions, from projected angles with a drift (|psi| grows to
// ~20,000 rad), against a compensated float64 sum reduced once: cos and sin
// within 1e-6 (float32 output rounding is ~6e-8). A float32 running sum,
// checked beside it, misses by orders of magnitude more, so the tolerance
// can fail.
func TestProjectedAnglesPrecision(t *testing.T) {
	const L, H, d = 65536, 2, 8
	P := d / 2
	rng := rand.New(rand.NewPCG(3, 9))
	theta := make([]float32, L*H*P)
	for i := range theta {
		theta[i] = float32(0.3 + 0.5*rng.NormFloat64())
	}
	cs := make([]float32, L*H*d)
	projectedCosSin(cs, theta, L, H, d, 2)
	var worst, worst32 float64
	for k := 0; k < H*P; k++ {
		var sum, comp float64 // Neumaier
		var s32 float32
		for i := 0; i < L; i++ {
			x := float64(theta[i*H*P+k])
			tt := sum + x
			if math.Abs(sum) >= math.Abs(x) {
				comp += (sum - tt) + x
			} else {
				comp += (x - tt) + sum
			}
			sum = tt
			s32 += theta[i*H*P+k]
			ref := math.Remainder(sum+comp, 2*math.Pi)
			c, s := math.Cos(ref), math.Sin(ref)
			h, p := k/P, k%P
			got := cs[(i*H+h)*d+2*p:]
			worst = math.Max(worst, math.Max(math.Abs(float64(got[0])-c), math.Abs(float64(got[1])-s)))
			worst32 = math.Max(worst32, math.Abs(math.Cos(float64(s32))-c))
		}
	}
	t.Logf("L=%d: worst |cos, sin - float64 reference| %.2g (a float32 running sum: %.2g)", L, worst, worst32)
	if worst > 1e-6 {
		t.Errorf("projected prefix sums drift: worst cos/sin error %.3g > 1e-6 at 65,536 tokens", worst)
	}
	if worst32 <= 1e-6 {
		t.Errorf("a float32 running sum stayed within 1e-6 (%.2g): the check cannot tell float64 from float32", worst32)
	}
}

package nativeeval

import (
	"math"
	"routebench/model/native"

	"routebench/modelspec"
)

// Rotation angles psi_i (per position, head and pair) as a table of
// float32 (cos, sin) pairs, [L][H][P][2]: the only form the kernels read.
// The angles themselves come from package modelspec (float64, one reduction
// rule), the same functions the trainer uses, so trainer and evaluator
// cannot drift.

func putCosSin(dst []float32, psi float64) {
	s, c := math.Sincos(psi)
	dst[0], dst[1] = float32(c), float32(s)
}

// ropeCosSin: psi_i = modelspec.RopeAngle(i, theta_p), the same for every
// head, for the frequencies theta ([d/2], ropescale.Scaling.Frequencies).
// The table is scaled by qk (a rotation times qk): the same table turns the
// queries and the keys, so both are multiplied by qk, YaRN's temperature;
// qk = 1 leaves it exact.
func ropeCosSin(L, H int, theta []float64, qk float64, workers int) []float32 {
	d := 2 * len(theta)
	cs := make([]float32, L*H*d)
	const rows = 256
	native.ParallelFor((L+rows-1)/rows, workers, func(b int) {
		for i := b * rows; i < min(L, (b+1)*rows); i++ {
			for p, th := range theta {
				putCosSin(cs[(i*H)*d+2*p:], modelspec.RopeAngle(i, th))
			}
			if qk != 1 {
				for k := i * H * d; k < (i*H+1)*d; k++ {
					cs[k] = float32(float64(cs[k]) * qk)
				}
			}
			for h := 1; h < H; h++ {
				copy(cs[(i*H+h)*d:(i*H+h+1)*d], cs[i*H*d:(i*H+1)*d])
			}
		}
	})
	return cs
}

// accumulatedCosSin: psi_i[h,p] = sum_{s<=i} angles[x_s, h, p] by
// modelspec.AccumulateAngles, sequential along the window and parallel over
// heads (the reductions and Sincos, not the additions, are the cost).
func accumulatedCosSin(tokens []int32, angles []float32, H, d int, workers int) []float32 {
	P := d / 2
	cs := make([]float32, len(tokens)*H*d)
	native.ParallelFor(H, workers, func(h int) {
		acc := make([]float64, P)
		for i, x := range tokens {
			modelspec.AccumulateAngles(acc, angles[(int(x)*H+h)*P:(int(x)*H+h+1)*P])
			out := cs[(i*H+h)*d : (i*H+h+1)*d]
			for p, a := range acc {
				putCosSin(out[2*p:], a)
			}
		}
	})
	return cs
}

// projectedCosSin: psi_i[h,p] = sum_{s<=i} theta[s, h, p] for one layer's
// projected angles theta [L][H][P] (learned-proj-qkv), written into cs
// [L][H][P][2]. The sums are float64 and reduced after every step by
// modelspec.AccumulateAngles, the table variants' rule, so that 65,536
// tokens do not drift (TestProjectedAnglesPrecision).
func projectedCosSin(cs, theta []float32, L, H, d int, workers int) {
	P := d / 2
	native.ParallelFor(H, workers, func(h int) {
		acc := make([]float64, P)
		for i := 0; i < L; i++ {
			modelspec.AccumulateAngles(acc, theta[(i*H+h)*P:(i*H+h+1)*P])
			out := cs[(i*H+h)*d : (i*H+h+1)*d]
			for p, a := range acc {
				putCosSin(out[2*p:], a)
			}
		}
	})
}

// alibiSlopes is modelspec.ALiBiSlopes in the kernels' float32.
func alibiSlopes(H int) []float32 {
	sl := modelspec.ALiBiSlopes(H)
	out := make([]float32, H)
	for h := range out {
		out[h] = float32(sl[h])
	}
	return out
}

package native

import (
	"fmt"
	"math"
	"testing"
)

// TestOnlineSoftmaxNoSubnormals: every form of the online-softmax step
// (plain, entropy, offsets, both) gives each probability as an exact 0 or
// a normal float32, never a subnormal, with both kernel sets: a subnormal
// costs a microcode assist where it is made and again in each FMA that
// reads it (PVBlock), and under PaTH-FoX's forgetting gate about half the
// probabilities of a long window are that small. Scores from 0 down to
// -110 below the row max (and -Inf) go through each form; those above -86
// must keep their value (exp to 1e-6 + 1e-7 |v| relative: rounding the
// argument v log2e costs 2^-24 of it), those under -87.4 must be 0 (both
// kernels' cut-off lies between).
func TestOnlineSoftmaxNoSubnormals(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		if err := checkNoSubnormals(); err != nil {
			t.Fatal(err)
		}
	})
}

// checkNoSubnormals runs the four forms on scores spanning the
// underflow range and says what the first wrong probability was.
func checkNoSubnormals() error {
	const nq = 21
	smallest := float32(math.SmallestNonzeroFloat32 * (1 << 23)) // 2^-126, the least normal
	sc0 := make([]float32, nq*64)
	for r := 0; r < nq; r++ {
		for j := 0; j < 64; j++ {
			k := r*63 + j - 1 // rows' j = 0 is the max, 0; then a descending ramp
			switch {
			case j == 0:
				sc0[r*64] = 0
			case j == 63 && r%4 == 1:
				sc0[r*64+j] = float32(math.Inf(-1)) // a masked key
			default:
				sc0[r*64+j] = float32(-110 * float64(k) / float64(nq*63))
			}
		}
	}
	a, b := make([]float32, nq), make([]float32, 64) // offsets adding exactly 0
	for i := range a {
		a[i] = 1
	}
	for j := range b {
		b[j] = -1
	}
	for _, form := range []string{"plain", "entropy", "offsets", "entropy+offsets"} {
		sc := append([]float32(nil), sc0...)
		m, l, f, rs, ent := make([]float32, 48), make([]float32, 48), make([]float32, 48), make([]float32, 48), make([]float32, 48)
		for i := range m {
			m[i] = float32(math.Inf(-1))
		}
		switch form {
		case "plain":
			OnlineSoftmax64(sc, nq, m, l, f, rs)
		case "entropy":
			OnlineSoftmaxEntropy64(sc, nq, m, l, f, rs, ent)
		case "offsets":
			OnlineSoftmaxOffsets64(sc, nq, a, b, m, l, f, rs)
		default:
			OnlineSoftmaxEntropyOffsets64(sc, nq, a, b, m, l, f, rs, ent)
		}
		for i, p := range sc {
			v := float64(sc0[i])
			switch {
			case p != 0 && p < smallest:
				return fmt.Errorf("%s: exp(%g) = %g, a subnormal; want 0 or a normal float32", form, v, p)
			case v < -87.4 && p != 0:
				return fmt.Errorf("%s: exp(%g) = %g, want 0 (under both kernels' cut-off)", form, v, p)
			case v > -86 && math.Abs(float64(p)-math.Exp(v)) > (1e-6-1e-7*v)*math.Exp(v):
				return fmt.Errorf("%s: exp(%g) = %g, want %g", form, v, p, math.Exp(v))
			}
		}
	}
	return nil
}

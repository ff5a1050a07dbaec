package modelspec

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// 2*pi to 60 digits, for the big.Float reference.
const twoPi60 = "6.28318530717958647692528676655900576839433879875021164194989"

// TestAccumulatedAnglesPrecision checks the host float64 prefix sum, reduced
// mod 2 pi at every step, against an exact big.Float sum reduced once, over
// 65,536 tokens: the longest evaluation length of the paper.
func TestAccumulatedAnglesPrecision(t *testing.T) {
	const V, H, P, L = 257, 2, 4, 65536
	table := RandomAngleTable(V, H, P, 1.0, 0.35, 42)
	rng := rand.New(rand.NewPCG(1, 1))
	tokens := make([]int32, L)
	for i := range tokens {
		// Skewed towards few tokens, so the sum drifts far from 0 (|psi| >> 2 pi).
		tokens[i] = int32(rng.IntN(8))
	}
	psi := make([][]float64, L)
	acc := make([]float64, H*P)
	for i, x := range tokens {
		AccumulateAngles(acc, table[int(x)*H*P:int(x+1)*H*P])
		psi[i] = append([]float64(nil), acc...)
	}
	twoPi, _, _ := big.ParseFloat(twoPi60, 10, 256, big.ToNearestEven)
	exact := make([]*big.Float, H*P)
	for k := range exact {
		exact[k] = new(big.Float).SetPrec(256)
	}
	var worst, maxAbs float64
	for i, x := range tokens {
		for k := range exact {
			exact[k].Add(exact[k], big.NewFloat(float64(table[int(x)*H*P+k])))
		}
		if i%4096 != 4095 && i != L-1 {
			continue
		}
		for k := range exact {
			// r = exact - round(exact / 2pi) * 2pi
			q := new(big.Float).SetPrec(256).Quo(exact[k], twoPi)
			qf, _ := q.Float64()
			n := new(big.Float).SetPrec(256).SetFloat64(math.Round(qf))
			r := new(big.Float).SetPrec(256).Sub(exact[k], n.Mul(n, twoPi))
			rf, _ := r.Float64()
			ef, _ := exact[k].Float64()
			maxAbs = math.Max(maxAbs, math.Abs(ef))
			d := math.Abs(math.Remainder(psi[i][k]-rf, 2*math.Pi))
			worst = math.Max(worst, d)
		}
	}
	if maxAbs < 100 {
		t.Fatalf("test too easy: max |psi| only %g", maxAbs)
	}
	if worst > 1e-9 {
		t.Fatalf("float64 mod-2pi prefix sum is %g rad off the exact sum at up to %d tokens", worst, L)
	}
	t.Logf("max |psi| %.0f rad, max error %.2g rad", maxAbs, worst)
}

func TestRopeAngles(t *testing.T) {
	theta := RopeFrequencies(32, 10000)
	if len(theta) != 16 || theta[0] != 1 {
		t.Fatalf("theta = %v", theta)
	}
	for _, i := range []int{0, 1, 100, 65535, 69999} {
		for p := 0; p < 16; p++ {
			want := math.Remainder(float64(i)*math.Pow(10000, -float64(2*p)/32), 2*math.Pi)
			if got := RopeAngle(i, theta[p]); got != want || math.Abs(got) > math.Pi {
				t.Fatalf("psi[%d][%d] = %g, want %g in [-pi, pi]", i, p, got, want)
			}
		}
	}
}

func TestAlibiSlopes(t *testing.T) {
	got := ALiBiSlopes(4)
	for h, want := range []float64{1. / 4, 1. / 16, 1. / 64, 1. / 256} {
		if got[h] != want {
			t.Fatalf("slopes(4) = %v", got)
		}
	}
	// 12 heads: the 8 slopes of 8 heads, then slopes 0, 2, 4, 6 of 16 heads.
	s12 := ALiBiSlopes(12)
	s8, s16 := ALiBiSlopes(8), ALiBiSlopes(16)
	want := append(append([]float64{}, s8...), s16[0], s16[2], s16[4], s16[6])
	for h := range want {
		if s12[h] != want[h] {
			t.Fatalf("slopes(12) = %v, want %v", s12, want)
		}
	}
}

func TestAngleTableDistribution(t *testing.T) {
	const V, H, P = 4000, 2, 8
	tab := RandomAngleTable(V, H, P, 1.0, 0.35, 1)
	sig := AngleSigmas(P, 1.0, 0.35)
	if sig[0] != 1 || math.Abs(sig[P-1]-0.35) > 1e-15 {
		t.Fatalf("sigmas %v", sig)
	}
	gaps := SpectralGaps(sig)
	for p := 0; p < P; p++ {
		var ss, cs float64
		for i := p; i < len(tab); i += P {
			a := float64(tab[i])
			ss += a * a
			cs += math.Cos(a)
		}
		n := float64(V * H)
		if sd := math.Sqrt(ss / n); math.Abs(sd-sig[p]) > 0.05*sig[p] {
			t.Errorf("pair %d: sample std %g, want %g", p, sd, sig[p])
		}
		if g := 1 - cs/n; math.Abs(g-gaps[p]) > 0.1*gaps[p]+0.005 {
			t.Errorf("pair %d: sample gap %g, want %g", p, g, gaps[p])
		}
	}
	if again := RandomAngleTable(V, H, P, 1.0, 0.35, 1); again[12345] != tab[12345] {
		t.Fatal("angle table is not a function of its seed")
	}
}

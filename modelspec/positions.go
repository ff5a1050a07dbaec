package modelspec

import (
	"fmt"
	"math"

	"routebench/internal/seeds"
)

// Host-side position math, in float64. Every rotation angle any
// implementation feeds to cos/sin comes from here, reduced by ReduceAngle,
// so the trainer's host path, the gomlx evaluators and the native evaluator
// see the same angles bit for bit.
//
// The one reduction rule: an angle is reduced to [-pi, pi] with
// math.Remainder(x, 2 pi) before it is used, and an accumulated prefix sum
// is reduced after every step, so |sum| never exceeds pi + max|angle| and
// each step adds an error of ~1e-16 rad (~1e-11 rad at 65,536 tokens,
// TestAccumulatedAnglesPrecision). A sum reduced only at the end would grow
// to thousands of radians and carry ~1e-12 rad of rounding per step.

// ReduceAngle is x modulo 2 pi in [-pi, pi].
func ReduceAngle(x float64) float64 { return math.Remainder(x, 2*math.Pi) }

// RopeFrequencies returns RoPE's theta_p = base^(-2p/dHead) for the dHead/2
// interleaved pairs (dims 2p, 2p+1) of a head (Su et al.).
func RopeFrequencies(dHead int, base float64) []float64 {
	theta := make([]float64, dHead/2)
	for p := range theta {
		theta[p] = math.Pow(base, -2*float64(p)/float64(dHead))
	}
	return theta
}

// RopeAngle is psi = i * theta, reduced: exact products in float64 keep full
// precision at large i, where a float32 product would not.
func RopeAngle(i int, theta float64) float64 { return ReduceAngle(float64(i) * theta) }

// AccumulateAngles adds one token's row of the angle table to the running
// prefix sums acc (the route sum psi_i = sum_{s<=i} angles[x_s]), reducing
// each sum after the step. len(row) == len(acc).
func AccumulateAngles(acc []float64, row []float32) {
	for k, a := range row {
		acc[k] = ReduceAngle(acc[k] + float64(a))
	}
}

// ALiBiSlopes returns m_h for H heads (Press et al. 2022): 2^(-8(h+1)/H)
// for a power of two H; otherwise the slopes of the next lower power of two
// n followed by every other slope of 2n (their reference code).
func ALiBiSlopes(H int) []float64 {
	pow2 := func(n int) []float64 {
		s := make([]float64, n)
		for h := range s {
			s[h] = math.Pow(2, -8*float64(h+1)/float64(n))
		}
		return s
	}
	n := 1
	for n*2 <= H {
		n *= 2
	}
	s := pow2(n)
	if n < H {
		extra := pow2(2 * n)
		for k := 0; len(s) < H; k += 2 {
			s = append(s, extra[k])
		}
	}
	return s
}

// The random angle table of the accumulated variants (random-*, and the
// initial value of learned-*-randinit): pair p of head h of token x turns by
// angles[x, h, p] ~ N(0, sigma_p^2), sigma_p geometric from SigmaMax
// (p = 0) to SigmaMin (p = P-1), drawn once from a seeded PCG. For this
// distribution E[cos a] = exp(-sigma^2/2), so the per-step spectral gap of
// pair p is 1 - exp(-sigma_p^2/2): the fraction of alignment lost per token.
// The defaults 1.0 .. 0.35 (gap 0.39 .. 0.059) decorrelate every pair within
// ~20-40 tokens, well inside T = 128; the pilot found 0.1 (gap 0.005) left the
// slowest pairs coherent over the whole training window, which then meet
// unseen angle patterns at long lengths, like RoPE's low frequencies.
//
// For a fixed table, psi_i - psi_j = n*omega + (random walk), with
// omega_p = sum_t freq(t) angles[t,p]: partly a RoPE with random frequencies,
// plus content-dependent jitter. Worth stating when results are read.

// AngleSigmas returns sigma_p for the P pairs.
func AngleSigmas(P int, sigmaMax, sigmaMin float64) []float64 {
	s := make([]float64, P)
	for p := range s {
		if P == 1 {
			s[p] = sigmaMax
			continue
		}
		s[p] = sigmaMax * math.Pow(sigmaMin/sigmaMax, float64(p)/float64(P-1))
	}
	return s
}

// SpectralGaps returns 1 - E[cos a] = 1 - exp(-sigma_p^2/2) per pair.
func SpectralGaps(sigmas []float64) []float64 {
	g := make([]float64, len(sigmas))
	for i, s := range sigmas {
		g[i] = 1 - math.Exp(-s*s/2)
	}
	return g
}

// RandomAngleTable draws angles[V,H,P] (flattened). Values are rounded to
// float32 once here; every later use (host prefix sums, graph, export)
// starts from these float32 values, so trainer and evaluator agree exactly.
func RandomAngleTable(V, H, P int, sigmaMax, sigmaMin float64, seed uint64) []float32 {
	sig := AngleSigmas(P, sigmaMax, sigmaMin)
	rng := seeds.Rand(seed, seeds.AngleTable)
	t := make([]float32, V*H*P)
	for i := range t {
		t[i] = float32(rng.NormFloat64() * sig[i%P])
	}
	return t
}

// InitialAngles is the angle table [V,H,P] (flattened) that c's variant
// starts from, as its AngleInit says: the fixed table of random-*, the
// initial value of a learned table. nil for variants without one. Every
// trainer initialises from here and the report measures a learned table's
// movement against it.
func InitialAngles(c Config) []float32 {
	v, err := LookupVariant(c.Variant)
	if err != nil || !v.HasAngleTable() {
		return nil
	}
	P := c.DModel / c.Heads / 2
	if !v.DrawsRandomAngles() {
		return make([]float32, c.Vocab*c.Heads*P)
	}
	return RandomAngleTable(c.Vocab, c.Heads, P, c.SigmaMax, c.SigmaMin, c.Seed)
}

// AngleNote documents a config's angle table for Arch.AngleNote.
func AngleNote(c Config) string {
	v, _ := LookupVariant(c.Variant)
	if v.AngleProj {
		return fmt.Sprintf("projected per block from the normed block input (angle_proj [D, H*P], %d pairs), trained from zero, angle learning rate x%g",
			c.DModel/c.Heads/2, v.LRScale(AngleProjName))
	}
	if v.AngleInit == AngleInitZero {
		return fmt.Sprintf("trained from a zero table over %d pairs, angle learning rate x%g", c.DModel/c.Heads/2, v.LRScale(AngleTable))
	}
	note := fmt.Sprintf("angles[x,h,p] ~ N(0, sigma_p^2), sigma_p geometric %g..%g over %d pairs, PCG seed %d; "+
		"spectral gap 1-exp(-sigma^2/2) %.4f..%.4f", c.SigmaMax, c.SigmaMin, c.DModel/c.Heads/2, c.Seed,
		SpectralGaps([]float64{c.SigmaMax})[0], SpectralGaps([]float64{c.SigmaMin})[0])
	if v.Learned {
		note = fmt.Sprintf("trained (angle learning rate x%g); initialised as %s", v.LRScale(AngleTable), note)
	}
	return note
}

package model

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Accumulated SO(2) rotations (random-*, learned-*): pair p of head h of
// token x turns by angles[x, h, p]; the query/key at position i is rotated by
// psi_i = sum_{s<=i} angles[x_s, h, p], so the logit between i and j sees the
// route sum over tokens j+1..i (the paper's transport P_{j->i} for commuting
// SO(2) steps).
//
// The table is drawn once from a seeded PCG: angles[x,h,p] ~ N(0, sigma_p^2),
// sigma_p geometric from SigmaMax (p = 0) to SigmaMin (p = P-1). For this
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
//
// Precision: on the host, prefix sums are accumulated in float64 and reduced
// modulo 2 pi at every step (error ~1e-16 per token, ~1e-11 rad at 65K
// tokens, tested). Inside the training graph of the learned variants the
// table is a variable, so the prefix sum is a float32 triangular matmul over
// one training block: at T <= 512 with |angles| ~ 1, |psi| stays below a few
// hundred radians, float32 spacing there is ~3e-5 rad, far below anything the
// loss can see, and the O(T^2) cost is a few MFLOP. Long contexts are never
// evaluated in-graph (the native evaluator uses the float64 path).

// angleSeedStream separates the angle table's random stream from the weights'.
const angleSeedStream = 0x616e676c65730a01 // "angles\n\x01"

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

// AngleNote documents the table's distribution for weights.Arch.AngleNote.
func AngleNote(c Config) string {
	note := fmt.Sprintf("angles[x,h,p] ~ N(0, sigma_p^2), sigma_p geometric %g..%g over %d pairs, PCG seed %d; "+
		"spectral gap 1-exp(-sigma^2/2) %.4f..%.4f", c.SigmaMax, c.SigmaMin, c.DModel/c.Heads/2, c.Seed,
		SpectralGaps([]float64{c.SigmaMax})[0], SpectralGaps([]float64{c.SigmaMin})[0])
	if v, _ := LookupVariant(c.Variant); v.Learned {
		note = "trained; initialised as " + note
	}
	return note
}

// randomAngleTable draws angles[V,H,P] (flattened). Values are rounded to
// float32 once here; every later use (host prefix sums, graph, export)
// starts from these float32 values, so trainer and evaluator agree exactly.
func randomAngleTable(V, H, P int, sigmaMax, sigmaMin float64, seed uint64) []float32 {
	sig := AngleSigmas(P, sigmaMax, sigmaMin)
	rng := rand.New(rand.NewPCG(seed, angleSeedStream))
	t := make([]float32, V*H*P)
	for i := range t {
		t[i] = float32(rng.NormFloat64() * sig[i%P])
	}
	return t
}

// accumulatedAngles returns psi[i][h*P+p] for one window of tokens: the
// float64 prefix sum of the table rows, reduced to [-pi, pi] at every step.
func accumulatedAngles(table []float32, H, P int, tokens []int32) [][]float64 {
	HP := H * P
	acc := make([]float64, HP)
	out := make([][]float64, len(tokens))
	for i, x := range tokens {
		row := table[int(x)*HP : int(x+1)*HP]
		for k, a := range row {
			acc[k] = math.Remainder(acc[k]+float64(a), 2*math.Pi)
		}
		out[i] = append([]float64(nil), acc...)
	}
	return out
}

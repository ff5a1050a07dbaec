// Package weightstest serves the tests and benchmarks of the forward passes
// (model, model/nativeeval, bench): random weight sets of any architecture at
// the scales of a trained small model, the paper profile's shape, and a
// float64 log-softmax to check log-probabilities against. Nothing in the
// pipeline imports it.
package weightstest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"routebench/modelspec"
	"routebench/modelspec/weights"
)

// RandomSet draws weights for a at scales like a trained small model's
// (unit gains, ~1/sqrt(fan-in) matrices), so a forward sees realistic
// logit ranges; the same seed gives the same set.
func RandomSet(t testing.TB, a modelspec.Arch, seed uint64) *weights.Set {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 42))
	V, D, F, H, P := a.Vocab, a.DModel, a.DHidden, a.Heads, a.DHead()/2
	mk := func(name string, scale, mean float64, shape ...int) weights.Tensor {
		n := 1
		for _, s := range shape {
			n *= s
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(mean + scale*r.NormFloat64())
		}
		return weights.Tensor{Name: name, Shape: shape, Data: x}
	}
	ts := []weights.Tensor{mk("embed", 1, 0, V, D), mk("normf", 0.1, 1, D), mk("unembed", 1/math.Sqrt(float64(D)), 0, D, V)}
	if a.HasAngleTable() {
		ts = append(ts, mk("angles", 0.7, 0, V, H, P))
	}
	for n := 0; n < a.Layers; n++ {
		p := fmt.Sprintf("block%03d/", n)
		sD, sF := 1/math.Sqrt(float64(D)), 1/math.Sqrt(float64(F))
		ts = append(ts, mk(p+"norm1", 0.1, 1, D), mk(p+"norm2", 0.1, 1, D),
			mk(p+"wq", 2*sD, 0, D, D), mk(p+"wk", 2*sD, 0, D, D), mk(p+"wv", sD, 0, D, D), mk(p+"wo", sD, 0, D, D),
			mk(p+"w1", sD, 0, D, F), mk(p+"b1", 0.1, 0, F), mk(p+"w2", sF, 0, F, D), mk(p+"b2", 0.1, 0, D))
	}
	for n := 0; n < a.Layers && a.Householder; n++ { // drawn after the rest: other variants' sets stay the same
		p := fmt.Sprintf("block%03d/", n)
		sD, R := 1/math.Sqrt(float64(D)), a.PathRank
		ts = append(ts, mk(p+modelspec.PathDown, sD, 0, D, R), mk(p+modelspec.PathUp, 1/math.Sqrt(float64(R)), 0, R, D),
			mk(p+modelspec.PathConvW, 0.5, 0, a.PathConv, D), mk(p+modelspec.PathWBeta, sD, 0, D, H), mk(p+modelspec.PathBBeta, 0.5, 0, H))
		if a.ForgetGate {
			ts = append(ts, mk(p+modelspec.FoxWGate, sD, 0, D, H), mk(p+modelspec.FoxBGate, 0.5, 1, H))
		}
	}
	for n := 0; n < a.Layers && a.AngleProj; n++ { // ~0.7 rad per token for unit-RMS block inputs
		ts = append(ts, mk(fmt.Sprintf("block%03d/angle_proj", n), 0.7/math.Sqrt(float64(D)), 0, D, H*P))
	}
	for n := 0; n < a.Layers && a.KerpleLog; n++ { // p ~ 1 +- 0.5, a ~ 0.5 +- 0.25: above the floor, a bias of a few nats at the test lengths
		p := fmt.Sprintf("block%03d/", n)
		kp, ka := mk(p+modelspec.KerpleP, 0.5, 1, H), mk(p+modelspec.KerpleA, 0.25, 0.5, H)
		for i := range ka.Data {
			kp.Data[i] = float32(math.Abs(float64(kp.Data[i])) + 2*modelspec.KerpleEps)
			ka.Data[i] = float32(math.Abs(float64(ka.Data[i])) + 2*modelspec.KerpleEps)
		}
		ts = append(ts, kp, ka)
	}
	set, err := weights.NewSet(a, ts)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// PaperArch is the paper profile's shape (planner.TrainConfig("paper", "random-qkv"), pinned
// equal by planner's TestPaperArchIsTheProfiles; 16 layers, width 768, 12 heads,
// MLP 3072, GPT-2 vocabulary 50257, context 512) with the costliest
// variant, accumulated rotations with value transport.
func PaperArch() modelspec.Arch {
	return modelspec.Arch{Variant: "random-qkv", Profile: "paper", Vocab: 50257, DModel: 768, Layers: 16, Heads: 12,
		DHidden: 3072, Context: 512, NormEps: 1e-5, RopeBase: 10000, Rotation: "accumulated", ValueRot: true}
}

// LogProb is log softmax(row)[target], computed in float64.
func LogProb(row []float32, target int32) float64 {
	mx := math.Inf(-1)
	for _, z := range row {
		mx = math.Max(mx, float64(z))
	}
	var sum float64
	for _, z := range row {
		sum += math.Exp(float64(z) - mx)
	}
	return float64(row[target]) - mx - math.Log(sum)
}

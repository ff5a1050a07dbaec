package model

import (
	"fmt"

	"routebench/modelspec"
)

// shapeConfig is a valid training config of a named test shape: "smoke"
// (seconds-scale; the smoke profile's model with 60 steps) or "cpu" (the cpu
// profile's model, for benchmarks and memory tests that report figures at
// that shape). They are fixtures: the profiles themselves are defined in
// stages/profile.go, and a test here depends on a shape's size, not on its
// being a profile's.
func shapeConfig(shape, variant string, vocab int) (Config, error) {
	c := Config{Variant: variant, Profile: shape, Vocab: vocab, Backend: "go",
		LR: 2e-3, MinLR: 1e-4, WeightDecay: 0.01, Clip: 1.0, SigmaMax: 1.0, SigmaMin: 0.35, Seed: 1}
	switch shape {
	case "smoke":
		c.DModel, c.Layers, c.Heads, c.DHidden = 32, 2, 2, 128
		c.Context, c.Batch, c.Steps, c.Warmup = 32, 8, 60, 6
		c.LR = 3e-3
		c.CheckpointEvery, c.EvalEvery, c.EvalBatches = 20, 20, 2
	case "cpu":
		c.DModel, c.Layers, c.Heads, c.DHidden = 128, 2, 4, 512
		c.Context, c.Batch, c.Steps, c.Warmup = 128, 16, 400, 40
		c.CheckpointEvery, c.EvalEvery, c.EvalBatches = 50, 50, 4
	default:
		return Config{}, fmt.Errorf("model test: unknown shape %q", shape)
	}
	if _, err := modelspec.LookupVariant(variant); err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

package model

import (
	"fmt"
	"hash/fnv"
	"math"
	"path"
	"sort"

	"routebench/internal/seeds"
	"routebench/modelspec"
	"routebench/modelspec/weights"
)

// paramSpec is one trained tensor, named as in ARCHITECTURE.md.
type paramSpec struct {
	Name  string
	Shape []int
	Decay bool // AdamW weight decay: matrices only, never norm gains, biases or angles
	// LRScale multiplies the schedule's learning rate for this tensor
	// (modelspec's Variant.LRScale: the learned angle table's factor).
	LRScale float64
}

func blockName(l int, t string) string { return fmt.Sprintf("block%03d/%s", l, t) }

// paramSpecs lists the trained tensors of a config, sorted by name (the
// order of weights files, checkpoints and graph inputs). The angle table of
// the random variants is fixed, so it is not here (see exportTensors).
func paramSpecs(c Config) []paramSpec {
	v, _ := modelspec.LookupVariant(c.Variant)
	D, F, V := c.DModel, c.DHidden, c.Vocab
	ps := []paramSpec{
		{Name: "embed", Shape: []int{V, D}, Decay: true},
		{Name: "normf", Shape: []int{D}, Decay: false},
		{Name: "unembed", Shape: []int{D, V}, Decay: true},
	}
	for l := 0; l < c.Layers; l++ {
		ps = append(ps,
			paramSpec{Name: blockName(l, "norm1"), Shape: []int{D}, Decay: false},
			paramSpec{Name: blockName(l, "wq"), Shape: []int{D, D}, Decay: true},
			paramSpec{Name: blockName(l, "wk"), Shape: []int{D, D}, Decay: true},
			paramSpec{Name: blockName(l, "wv"), Shape: []int{D, D}, Decay: true},
			paramSpec{Name: blockName(l, "wo"), Shape: []int{D, D}, Decay: true},
			paramSpec{Name: blockName(l, "norm2"), Shape: []int{D}, Decay: false},
			paramSpec{Name: blockName(l, "w1"), Shape: []int{D, F}, Decay: true},
			paramSpec{Name: blockName(l, "b1"), Shape: []int{F}, Decay: false},
			paramSpec{Name: blockName(l, "w2"), Shape: []int{F, D}, Decay: true},
			paramSpec{Name: blockName(l, "b2"), Shape: []int{D}, Decay: false},
		)
	}
	if v.Householder {
		// Projections decay like every matrix; the conv taps and biases do not.
		H, R, K := c.Heads, modelspec.PathRank, modelspec.PathConv
		for l := 0; l < c.Layers; l++ {
			ps = append(ps,
				paramSpec{Name: blockName(l, modelspec.PathDown), Shape: []int{D, R}, Decay: true},
				paramSpec{Name: blockName(l, modelspec.PathUp), Shape: []int{R, D}, Decay: true},
				paramSpec{Name: blockName(l, modelspec.PathConvW), Shape: []int{K, D}, Decay: false},
				paramSpec{Name: blockName(l, modelspec.PathWBeta), Shape: []int{D, H}, Decay: true},
				paramSpec{Name: blockName(l, modelspec.PathBBeta), Shape: []int{H}, Decay: false},
			)
			if v.ForgetGate {
				ps = append(ps, paramSpec{Name: blockName(l, modelspec.FoxWGate), Shape: []int{D, H}, Decay: true}, paramSpec{Name: blockName(l, modelspec.FoxBGate), Shape: []int{H}, Decay: false})
			}
		}
	}
	if v.KerpleLog {
		// Not decayed, as biases and gains (modelspec/kerple.go).
		for l := 0; l < c.Layers; l++ {
			ps = append(ps,
				paramSpec{Name: blockName(l, modelspec.KerpleP), Shape: []int{c.Heads}, Decay: false},
				paramSpec{Name: blockName(l, modelspec.KerpleA), Shape: []int{c.Heads}, Decay: false},
			)
		}
	}
	if v.AngleProj {
		// Zero init (initParams) and not decayed, like the learned table:
		// modelspec/angleproj.go says why.
		for l := 0; l < c.Layers; l++ {
			ps = append(ps, paramSpec{Name: blockName(l, modelspec.AngleProjName), Shape: []int{D, c.DModel / 2}, Decay: false})
		}
	}
	if v.Learned {
		// Not decayed: decay would pull every pair's spectral gap towards 0.
		ps = append(ps, paramSpec{Name: modelspec.AngleTable, Shape: []int{V, c.Heads, c.DModel / c.Heads / 2}, Decay: false})
	}
	for i := range ps {
		ps[i].LRScale = v.LRScale(ps[i].Name)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// initParams draws the initial values. Each tensor has its own PCG stream
// keyed by (seed, name), so the same tensor starts identically in every
// variant and adding a tensor shifts no other.
func initParams(c Config, specs []paramSpec) [][]float32 {
	out := make([][]float32, len(specs))
	for i, s := range specs {
		x := make([]float32, size(s.Shape))
		base := path.Base(s.Name)
		switch base {
		case "norm1", "norm2", "normf":
			for j := range x {
				x[j] = 1
			}
		case "b1", "b2", modelspec.PathBBeta, modelspec.FoxBGate: // beta = 1 and a gate of log(1/2) per token at init (modelspec/householder.go)
		case modelspec.AngleProjName: // zero: the model starts as nope (modelspec/angleproj.go)
		case modelspec.PathConvW: // PyTorch's Conv1d default, fan-in K (depthwise), as the official PaTH keeps it
			bound := 1 / math.Sqrt(float64(s.Shape[0]))
			h := fnv.New64a()
			h.Write([]byte(s.Name))
			rng := seeds.Rand(c.Seed, seeds.InitWeights, h.Sum64())
			for j := range x {
				x[j] = float32((2*rng.Float64() - 1) * bound)
			}
		case modelspec.KerpleP, modelspec.KerpleA: // U(0, 2) and U(0, 1), the official init (modelspec/kerple.go)
			width := modelspec.KerpleInitScale(base)
			h := fnv.New64a()
			h.Write([]byte(s.Name))
			rng := seeds.Rand(c.Seed, seeds.InitWeights, h.Sum64())
			for j := range x {
				x[j] = float32(rng.Float64() * width)
			}
		case modelspec.AngleTable:
			x = modelspec.InitialAngles(c) // zero or random, as the variant says
		default:
			std := initStd
			if base == "wo" || base == "w2" {
				std /= math.Sqrt(2 * float64(c.Layers))
			}
			h := fnv.New64a()
			h.Write([]byte(s.Name))
			rng := seeds.Rand(c.Seed, seeds.InitWeights, h.Sum64())
			for j := range x {
				x[j] = float32(rng.NormFloat64() * std)
			}
		}
		out[i] = x
	}
	return out
}

// fixedAngles is the angle table of a random-* variant (nil otherwise).
func fixedAngles(c Config) []float32 {
	v, _ := modelspec.LookupVariant(c.Variant)
	if v.Learned {
		return nil
	}
	return modelspec.InitialAngles(c)
}

// exportSet builds the canonical weights set: the trained tensors plus the
// fixed angle table of random variants, so the evaluator needs no RNG.
func exportSet(c Config, specs []paramSpec, values [][]float32) (*weights.Set, error) {
	ts := make([]weights.Tensor, 0, len(specs)+1)
	for i, s := range specs {
		ts = append(ts, weights.Tensor{Name: s.Name, Shape: s.Shape, Data: values[i]})
	}
	if a := fixedAngles(c); a != nil {
		ts = append(ts, weights.Tensor{Name: "angles", Shape: []int{c.Vocab, c.Heads, c.DModel / c.Heads / 2}, Data: a})
	}
	return weights.NewSet(c.Arch(), ts)
}

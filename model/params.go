package model

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path"
	"sort"

	"routebench/modelspec"
	"routebench/modelspec/weights"
)

// paramSpec is one trained tensor, named as in ARCHITECTURE.md.
type paramSpec struct {
	Name  string
	Shape []int
	Decay bool // AdamW weight decay: matrices only, never norm gains, biases or angles
}

func blockName(l int, t string) string { return fmt.Sprintf("block%03d/%s", l, t) }

// paramSpecs lists the trained tensors of a config, sorted by name (the
// order of weights files, checkpoints and graph inputs). The angle table of
// the random variants is fixed, so it is not here (see exportTensors).
func paramSpecs(c Config) []paramSpec {
	v, _ := modelspec.LookupVariant(c.Variant)
	D, F, V := c.DModel, c.DHidden, c.Vocab
	ps := []paramSpec{
		{"embed", []int{V, D}, true},
		{"normf", []int{D}, false},
		{"unembed", []int{D, V}, true},
	}
	for l := 0; l < c.Layers; l++ {
		ps = append(ps,
			paramSpec{blockName(l, "norm1"), []int{D}, false},
			paramSpec{blockName(l, "wq"), []int{D, D}, true},
			paramSpec{blockName(l, "wk"), []int{D, D}, true},
			paramSpec{blockName(l, "wv"), []int{D, D}, true},
			paramSpec{blockName(l, "wo"), []int{D, D}, true},
			paramSpec{blockName(l, "norm2"), []int{D}, false},
			paramSpec{blockName(l, "w1"), []int{D, F}, true},
			paramSpec{blockName(l, "b1"), []int{F}, false},
			paramSpec{blockName(l, "w2"), []int{F, D}, true},
			paramSpec{blockName(l, "b2"), []int{D}, false},
		)
	}
	if v.Householder {
		// Projections decay like every matrix; the conv taps and biases do not.
		H, R, K := c.Heads, modelspec.PathRank, modelspec.PathConv
		for l := 0; l < c.Layers; l++ {
			ps = append(ps,
				paramSpec{blockName(l, pathDown), []int{D, R}, true},
				paramSpec{blockName(l, pathUp), []int{R, D}, true},
				paramSpec{blockName(l, pathConv), []int{K, D}, false},
				paramSpec{blockName(l, pathWB), []int{D, H}, true},
				paramSpec{blockName(l, pathBB), []int{H}, false},
			)
			if v.ForgetGate {
				ps = append(ps, paramSpec{blockName(l, foxWG), []int{D, H}, true}, paramSpec{blockName(l, foxBG), []int{H}, false})
			}
		}
	}
	if v.Learned {
		// Not decayed: decay would pull every pair's spectral gap towards 0.
		ps = append(ps, paramSpec{"angles", []int{V, c.Heads, c.DModel / c.Heads / 2}, false})
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
		case "b1", "b2", pathBB, foxBG: // beta = 1 and a gate of log(1/2) per token at init (modelspec/path.go)
		case pathConv: // PyTorch's Conv1d default, fan-in K (depthwise), as the official PaTH keeps it
			bound := 1 / math.Sqrt(float64(s.Shape[0]))
			h := fnv.New64a()
			h.Write([]byte(s.Name))
			rng := rand.New(rand.NewPCG(c.Seed, h.Sum64()))
			for j := range x {
				x[j] = float32((2*rng.Float64() - 1) * bound)
			}
		case "angles":
			x = modelspec.RandomAngleTable(c.Vocab, c.Heads, c.DModel/c.Heads/2, c.SigmaMax, c.SigmaMin, c.Seed)
		default:
			std := initStd
			if base == "wo" || base == "w2" {
				std /= math.Sqrt(2 * float64(c.Layers))
			}
			h := fnv.New64a()
			h.Write([]byte(s.Name))
			rng := rand.New(rand.NewPCG(c.Seed, h.Sum64()))
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
	if v.Rotation != modelspec.RotationAccumulated || v.Learned {
		return nil
	}
	return modelspec.RandomAngleTable(c.Vocab, c.Heads, c.DModel/c.Heads/2, c.SigmaMax, c.SigmaMin, c.Seed)
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

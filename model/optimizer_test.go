package model

import (
	"fmt"
	"math"
	"path"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/modelspec"
)

func TestLearningRateSchedule(t *testing.T) {
	c := Config{Steps: 100, Warmup: 10, LR: 1e-3, MinLR: 1e-4}
	for _, tc := range []struct {
		s    int
		want float64
	}{{0, 1e-4}, {9, 1e-3}, {10, 1e-3}, {99, 1e-4}} {
		if got := learningRate(c, tc.s); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("lr(%d) = %g, want %g", tc.s, got, tc.want)
		}
	}
	for s := 11; s < 100; s++ {
		if learningRate(c, s) >= learningRate(c, s-1) {
			t.Fatalf("lr not decreasing at step %d", s)
		}
	}
}

// TestAdamWClipAndDecayMask checks one update against a float64 host
// computation: gradients clipped jointly by their global norm, decay only
// where the spec says so, each tensor at its own learning-rate factor (0
// reads as 1; a scaled decayed tensor decays at its scaled rate).
func TestAdamWClipAndDecayMask(t *testing.T) {
	specs := []paramSpec{{Name: "w", Shape: []int{2}, Decay: true, LRScale: 1}, {Name: "gain", Shape: []int{2}},
		{Name: "angles", Shape: []int{2}, LRScale: 10}, {Name: "w3", Shape: []int{2}, Decay: true, LRScale: 3}}
	p := [][]float64{{1, -2}, {0.5, 3}, {0.25, -0.5}, {2, 1}}
	g := [][]float64{{1, 0}, {0, 2}, {-2, 0}, {0, 4}} // global norm 5
	const lr, wd, clip, step = 0.1, 0.5, 1.0, 0
	var got [][]float64
	err := catch("adamW test", func() error {
		exec, err := NewExec(testBackend(t), func(in []*Node) []*Node {
			zero := func(x *Node) *Node { return ZerosLike(x) }
			bc1 := Scalar(in[0].Graph(), in[0].DType(), 1-adamBeta1)
			bc2 := Scalar(in[0].Graph(), in[0].DType(), 1-adamBeta2)
			lrN := Scalar(in[0].Graph(), in[0].DType(), lr)
			k := len(specs)
			zeros := make([]*Node, k)
			for i := range zeros {
				zeros[i] = zero(in[i])
			}
			np, _, _, gn := adamW(specs, in[:k], zeros, zeros, in[k:], lrN, bc1, bc2, wd, clip)
			return append(np, gn)
		})
		if err != nil {
			return err
		}
		var args []any
		for _, x := range append(append([][]float64{}, p...), g...) {
			args = append(args, tensors.FromValue(x))
		}
		out, err := exec.Exec(args...)
		if err != nil {
			return err
		}
		for _, o := range out {
			got = append(got, tensors.MustCopyFlatData[float64](o))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if gn := got[len(specs)][0]; math.Abs(gn-5) > 1e-12 {
		t.Fatalf("grad norm %g, want 5", gn)
	}
	scale := clip / (5 + 1e-6)
	for i := range p {
		for j := range p[i] {
			gc := g[i][j] * scale
			m := (1 - adamBeta1) * gc / (1 - adamBeta1)
			v := (1 - adamBeta2) * gc * gc / (1 - adamBeta2)
			lri := lr * max(specs[i].LRScale, 1)
			want := p[i][j] - lri*m/(math.Sqrt(v)+adamEps)
			if specs[i].Decay {
				want -= lri * wd * p[i][j]
			}
			if math.Abs(got[i][j]-want) > 1e-9 {
				t.Errorf("%s[%d] = %.12g, want %.12g", specs[i].Name, j, got[i][j], want)
			}
		}
	}
}

// The learning-rate factors come from modelspec: the learned table of
// learned-qk steps at LearnedAngleLR, the randinit one and every other
// tensor at 1.
func TestParamSpecsLRScale(t *testing.T) {
	for _, tc := range []struct {
		variant string
		angles  float64
	}{{"learned-qk", modelspec.LearnedAngleLR}, {"learned-qkv", modelspec.LearnedAngleLR}, {"learned-qk-randinit", 1}, {"rope", 0}} {
		c, _ := shapeConfig("smoke", tc.variant, 11)
		var angles float64
		for _, s := range paramSpecs(c) {
			if s.Name == modelspec.AngleTable {
				angles = s.LRScale
			} else if s.LRScale != 1 {
				t.Errorf("%s %s: lr factor %g, want 1", tc.variant, s.Name, s.LRScale)
			}
		}
		if angles != tc.angles {
			t.Errorf("%s: angle table lr factor %g, want %g", tc.variant, angles, tc.angles)
		}
	}
}

// learned-proj-qkv: one zero-initialised, undecayed angle projection per
// block at the base rate, D^2/2 parameters each, and no angle table.
func TestParamSpecsAngleProj(t *testing.T) {
	c, _ := shapeConfig("smoke", "learned-proj-qkv", 11)
	base, _ := shapeConfig("smoke", "nope", 11)
	count := func(specs []paramSpec) (n int) {
		for _, s := range specs {
			n += size(s.Shape)
		}
		return n
	}
	specs := paramSpecs(c)
	if got, want := count(specs)-count(paramSpecs(base)), c.Layers*modelspec.AngleProjParams(c.DModel, c.Heads); got != want {
		t.Errorf("learned-proj-qkv has %d parameters more than nope, want %d", got, want)
	}
	vals := initParams(c, specs)
	var projs int
	for i, s := range specs {
		if s.Name == modelspec.AngleTable {
			t.Errorf("learned-proj-qkv has an angle table")
		}
		if path.Base(s.Name) != modelspec.AngleProjName {
			continue
		}
		projs++
		if s.LRScale != 1 || s.Decay || fmt.Sprint(s.Shape) != fmt.Sprint([]int{c.DModel, c.DModel / 2}) { // the base rate: modelspec/angleproj.go
			t.Errorf("%s: lr x%g, decay %v, shape %v", s.Name, s.LRScale, s.Decay, s.Shape)
		}
		for _, x := range vals[i] {
			if x != 0 {
				t.Fatalf("%s starts at %g, want 0 (the model starts as nope)", s.Name, x)
			}
		}
	}
	if projs != c.Layers {
		t.Errorf("%d angle projections for %d blocks", projs, c.Layers)
	}
}

// TestAngleReach checks the arithmetic behind modelspec.LearnedAngleLR:
// Adam moves an entry by at most ~lr per step, so the schedule's sum at the
// cpu profile's shape (0.42 rad) is below the random table's largest sigma
// (1 rad), and ten times it is past it.
func TestAngleReach(t *testing.T) {
	c := Config{Steps: 400, Warmup: 40, LR: 2e-3, MinLR: 1e-4}
	var sum float64
	for s := 0; s < c.Steps; s++ {
		sum += learningRate(c, s)
	}
	if sum < 0.41 || sum > 0.43 {
		t.Fatalf("schedule sum %.4f rad, want 0.42 (modelspec.LearnedAngleLR's comment)", sum)
	}
	if reach := sum * modelspec.LearnedAngleLR; reach < 4 {
		t.Fatalf("a learned angle's reach %.2f rad; the factor was chosen to exceed 4", reach)
	}
}

func TestParamSpecsDecayMask(t *testing.T) {
	c, _ := shapeConfig("smoke", "learned-qk", 11)
	for _, s := range paramSpecs(c) {
		matrix := len(s.Shape) == 2
		if s.Decay != matrix {
			t.Errorf("%s %v: decay %v", s.Name, s.Shape, s.Decay)
		}
	}
}

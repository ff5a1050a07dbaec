package model

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"
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
// where the spec says so.
func TestAdamWClipAndDecayMask(t *testing.T) {
	specs := []paramSpec{{"w", []int{2}, true}, {"gain", []int{2}, false}}
	p := [][]float64{{1, -2}, {0.5, 3}}
	g := [][]float64{{3, 0}, {0, 4}} // global norm 5
	const lr, wd, clip, step = 0.1, 0.5, 1.0, 0
	var got [][]float64
	err := catch("adamW test", func() error {
		exec, err := NewExec(testBackend(t), func(in []*Node) []*Node {
			zero := func(x *Node) *Node { return ZerosLike(x) }
			bc1 := Scalar(in[0].Graph(), in[0].DType(), 1-adamBeta1)
			bc2 := Scalar(in[0].Graph(), in[0].DType(), 1-adamBeta2)
			lrN := Scalar(in[0].Graph(), in[0].DType(), lr)
			np, _, _, gn := adamW(specs, in[:2], []*Node{zero(in[0]), zero(in[1])}, []*Node{zero(in[0]), zero(in[1])},
				in[2:], lrN, bc1, bc2, wd, clip)
			return append(np, gn)
		})
		if err != nil {
			return err
		}
		out, err := exec.Exec(tensors.FromValue(p[0]), tensors.FromValue(p[1]), tensors.FromValue(g[0]), tensors.FromValue(g[1]))
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
	if math.Abs(got[2][0]-5) > 1e-12 {
		t.Fatalf("grad norm %g, want 5", got[2][0])
	}
	scale := clip / (5 + 1e-6)
	for i := range p {
		for j := range p[i] {
			gc := g[i][j] * scale
			m := (1 - adamBeta1) * gc / (1 - adamBeta1)
			v := (1 - adamBeta2) * gc * gc / (1 - adamBeta2)
			want := p[i][j] - lr*m/(math.Sqrt(v)+adamEps)
			if specs[i].Decay {
				want -= lr * wd * p[i][j]
			}
			if math.Abs(got[i][j]-want) > 1e-9 {
				t.Errorf("%s[%d] = %.12g, want %.12g", specs[i].Name, j, got[i][j], want)
			}
		}
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

package model

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/model/nativetrain"
	"routebench/modelspec"
)

// The native trainer (model/nativetrain) against this package's gomlx
// model: one batch's loss and the gradient of every tensor, the native
// float32 pass against the gomlx graph in float64 (whose gradients
// TestModelGradients checks against float64 finite differences).

// gradTol bounds, per tensor, max |native - gomlx float64| / max |gomlx|:
// float32 arithmetic over a 2-layer model at T = 32 measured errors of
// about 1e-6 to 1e-5 of the largest element (printed by the test).
const gradTol = 2e-4

// float64Grads runs the gomlx loss and its gradient in float64 at vals.
func float64Grads(t *testing.T, c Config, specs []paramSpec, vals [][]float32, tok, tgt []int32, B, T int) (float64, [][]float64) {
	t.Helper()
	tr := &trainer{c: c, n: newNet(c), specs: specs, table: fixedAngles(c)}
	tr.hostRot = tr.n.v.HostRotation()
	bin, err := tr.batchInputs(tok, tgt, B, T)
	if err != nil {
		t.Fatal(err)
	}
	var inputs []*tensors.Tensor
	for i, s := range specs {
		f := make([]float64, len(vals[i]))
		for j, y := range vals[i] {
			f[j] = float64(y)
		}
		inputs = append(inputs, tensors.FromFlatDataAndDimensions(f, s.Shape...))
	}
	k := len(inputs)
	for i, b := range bin {
		bt := b.(*tensors.Tensor)
		if i >= 2 { // cos, sin to float64
			f := tensors.MustCopyFlatData[float32](bt)
			g := make([]float64, len(f))
			for j, y := range f {
				g[j] = float64(y)
			}
			bt = tensors.FromFlatDataAndDimensions(g, bt.Shape().Dimensions...)
		}
		inputs = append(inputs, bt)
	}
	return gradients(t, func(in []*Node) *Node {
		tk, tg, rot, _ := tr.batchNodes(in[k:])
		return tr.loss(in[:k], tk, tg, rot)
	}, inputs)
}

// agreeConfig is randomSet's model (weights well away from init, so that
// attention and rotations matter) at the smoke context.
func agreeCase(t *testing.T, variant string) (Config, []paramSpec, [][]float32, []int32, []int32) {
	t.Helper()
	set, c := randomSet(t, variant)
	c.Trainer = modelspec.TrainerNative
	specs := paramSpecs(c)
	vals := make([][]float32, len(specs))
	for i, s := range specs {
		x, err := set.Get(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		vals[i] = x
	}
	tok, tgt, err := newSynthData(c.Vocab).TrainBatch(1, 0, 2, c.Context)
	if err != nil {
		t.Fatal(err)
	}
	return c, specs, vals, tok, tgt
}

func TestNativeGradientsMatchGomlx(t *testing.T) {
	for _, v := range modelspec.Variants() {
		t.Run(v, func(t *testing.T) {
			c, specs, vals, tok, tgt := agreeCase(t, v)
			want, wantG := float64Grads(t, c, specs, vals, tok, tgt, 2, c.Context)
			tr, err := nativetrain.New(c, nativeParams(c), fixedAngles(c), 0)
			if err != nil {
				t.Fatal(err)
			}
			loss, grads, err := tr.Gradients(vals, tok, tgt)
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(float64(loss) - want); d > 1e-5*math.Max(1, want) {
				t.Errorf("loss: native %.7g, gomlx float64 %.7g", loss, want)
			}
			worst := 0.0
			for i, s := range specs {
				var e, scale float64
				for j, g := range wantG[i] {
					e = math.Max(e, math.Abs(float64(grads[i][j])-g))
					scale = math.Max(scale, math.Abs(g))
				}
				rel := e / math.Max(scale, 1e-12)
				worst = math.Max(worst, rel)
				if rel > gradTol || scale == 0 {
					t.Errorf("%s: max |native - gomlx| = %.3g, %.3g of the largest element %.3g (tolerance %g)", s.Name, e, rel, scale, gradTol)
				}
			}
			t.Logf("loss %.6f; worst tensor error %.2g of its largest element", loss, worst)
		})
	}
}

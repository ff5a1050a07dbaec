//go:build flopcount

package nativetrain_test

import (
	"math"
	"testing"

	"routebench/model"
	"routebench/model/native"
	"routebench/model/nativetrain"
	"routebench/modelspec"
)

// TestExecutedFlops prints the operations the packed kernels run in one
// training step of every default variant at the protocol shape (d_model
// 128, 2 layers, 4 heads of 32, T 512, batch 8) and their ratio to rope's:
// the step-time ratio a variant would have if its products ran as fast as
// rope's (make flop-count; docs/training.md). model.FlopsPerStep, the
// figure GFLOP/s divides, counts the causal products dense and PaTH's
// transport not at all.
func TestExecutedFlops(t *testing.T) {
	if testing.Short() {
		t.Skip("trains every variant for 3 steps at the protocol shape")
	}
	type row struct {
		v           string
		exec, dense float64
	}
	var rows []row
	rope := 0.0
	for _, v := range modelspec.DefaultVariants() {
		c := nativetrain.TestConfig(v)
		c.DModel, c.Heads, c.DHidden, c.Layers = 128, 4, 512, 2
		c.Context, c.Batch = 512, 8
		tr := nativetrain.NewTestTrainer(t, c, 0)
		tok, tgt := nativetrain.TestBatch(c, c.Batch, 1)
		var per [3]int64
		for s := 1; s <= 3; s++ {
			native.ResetFlops()
			bc1 := 1 - float32(math.Pow(modelspec.AdamBeta1, float64(s)))
			bc2 := 1 - float32(math.Pow(modelspec.AdamBeta2, float64(s)))
			if _, _, err := tr.Step(1e-3, bc1, bc2, tok, tgt); err != nil {
				t.Fatal(err)
			}
			per[s-1] = native.ExecutedFlops()
		}
		if per[0] <= 0 || per[1] != per[0] || per[2] != per[0] {
			t.Fatalf("%s: executed operations per step %v: want the same positive count every step", v, per)
		}
		rows = append(rows, row{v, float64(per[0]) / 1e9, model.FlopsPerStep(c) / 1e9})
		if v == "rope" {
			rope = rows[len(rows)-1].exec
		}
	}
	if rope == 0 {
		t.Fatal("rope is not among the default variants: no reference for the ratios")
	}
	for _, r := range rows {
		t.Logf("%-16s executed %7.3f GFLOP/step  (x%.3f rope's)  FlopsPerStep %7.3f", r.v, r.exec, r.exec/rope, r.dense)
	}
}

package nativetrain

import (
	"math"
	"slices"
	"testing"

	"routebench/modelspec"
)

// TestStepsWorkerIndependent: three AdamW steps with 1 and with 3 workers
// give bitwise the same parameters, moments and losses for every variant
// (every reduction is cut by the data's shape, never by the workers), and
// repeating the 3-worker run gives them again (thread timing).
func TestStepsWorkerIndependent(t *testing.T) {
	for _, v := range modelspec.AllVariants() { // PaTH's opt-in variants too
		t.Run(v, func(t *testing.T) {
			c := testConfig(v)
			run := func(workers int) (losses []float32, p, m, vv [][]float32) {
				tr := newTestTrainer(t, c, workers)
				for s := 1; s <= 3; s++ {
					tok, tgt := testBatch(c, c.Batch, uint64(s))
					bc1 := 1 - float32(math.Pow(modelspec.AdamBeta1, float64(s)))
					bc2 := 1 - float32(math.Pow(modelspec.AdamBeta2, float64(s)))
					loss, _, err := tr.Step(1e-3, bc1, bc2, tok, tgt)
					if err != nil {
						t.Fatal(err)
					}
					losses = append(losses, loss)
				}
				p, m, vv = tr.State()
				return losses, p, m, vv
			}
			l1, p1, m1, v1 := run(1)
			for _, w := range []int{3, 3} {
				lw, pw, mw, vw := run(w)
				if !slices.Equal(l1, lw) {
					t.Fatalf("losses with 1 worker %v, with %d %v", l1, w, lw)
				}
				for i := range p1 {
					if !slices.Equal(p1[i], pw[i]) || !slices.Equal(m1[i], mw[i]) || !slices.Equal(v1[i], vw[i]) {
						t.Fatalf("tensor %d differs between 1 and %d workers", i, w)
					}
				}
			}
		})
	}
}

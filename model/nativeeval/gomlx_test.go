//go:build noxla

package nativeeval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"routebench/internal/kerneltest"
	"routebench/model/gomlxeval"
	"routebench/modelspec/weights/weightstest"
)

// TestMatchesGomlxForward cross-checks the native logits against the gomlx
// model's forward (gomlxeval.Forward, simplego backend) on random weights for
// every variant: the two implementations of ARCHITECTURE.md must agree to
// float32 accuracy (tolLogit, scaled by the row's largest logit). Build
// with -tags noxla (gomlx's XLA binding is not available here). Both kernel
// sets (kerneltest.Each).
func TestMatchesGomlxForward(t *testing.T) {
	lengths := []int{1, 65, 131}
	if testing.Short() {
		lengths = []int{65}
	}
	kerneltest.Each(t, func(t *testing.T) {
		for _, v := range variants {
			for _, L := range lengths {
				t.Run(fmt.Sprintf("%s/L=%d", v, L), func(t *testing.T) {
					a := variantArch(v)
					set := weightstest.RandomSet(t, a, uint64(L)+100)
					r := rand.New(rand.NewPCG(uint64(L), 6))
					toks := make([]int32, L)
					for i := range toks {
						toks[i] = int32(r.IntN(a.Vocab))
					}
					want, err := gomlxeval.Forward(set, toks)
					if err != nil {
						t.Fatalf("gomlx forward: %v", err)
					}
					m, err := Load(set)
					if err != nil {
						t.Fatal(err)
					}
					res, err := m.LogProbs(context.Background(), toks, nil, Options{ReturnLogits: true})
					if err != nil {
						t.Fatal(err)
					}
					var worst float64 // relative to the row's 1 + max |logit|
					for i := range want {
						var mx float64
						for _, x := range want[i] {
							mx = math.Max(mx, math.Abs(float64(x)))
						}
						tol := logitTol(a) * (1 + mx)
						for c, x := range want[i] {
							g := res.Logits[i][c]
							worst = math.Max(worst, math.Abs(float64(g)-float64(x))/(1+mx))
							if math.Abs(float64(g)-float64(x)) > tol {
								t.Fatalf("row %d logit %d: native %.7g, gomlx %.7g (tol %.2g)", i, c, g, x, tol)
							}
						}
					}
					t.Logf("worst |native - gomlx| %.2g of 1 + max |logit| (tolerance %g)", worst, logitTol(a))
				})
			}
		}
	})
}

package nativeeval

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"routebench/modelspec/weights/weightstest"
)

// refStepSums is the float64 sum over positions [from, L) of
// scale(beta) w w^T per layer and head, from the reference's steps
// (path_reference_test.go, ARCHITECTURE.md's definition, as the gomlx
// graph's pathSteps builds them): [layer][head][d*d].
func refStepSums(t *testing.T, set *weightsView, toks []int32, from int, scale func(b float64) float64) [][][]float64 {
	t.Helper()
	var out [][][]float64
	refForwardPath(set, toks, func(n int, rp *refPath) {
		H := len(rp.w[0])
		sums := make([][]float64, H)
		for h := range sums {
			S := make([]float64, rp.d*rp.d)
			for i := from; i < len(toks); i++ {
				w, b := rp.w[i][h], scale(rp.beta[i][h])
				for r := range w {
					for c := range w {
						S[r*rp.d+c] += b * w[r] * w[c]
					}
				}
			}
			sums[h] = S
		}
		out = append(out, sums)
	})
	return out
}

// stepSumError is the largest |native - ref| over every layer, head and
// entry, in units of the tolerance: 2e-5 (tolLogit's per-stage budget) per
// summed position, each term bounded by beta < 2. Below 1 agrees.
func stepSumError(got []PathStepSum, want [][][]float64, H, L int) float64 {
	var worst float64
	for _, s := range got {
		ref := want[s.Layer][s.Head]
		for k, x := range s.Sum {
			worst = math.Max(worst, math.Abs(x-ref[k])/(2e-5*float64(L)))
		}
	}
	return worst
}

// TestPathStepSumsMatchReference checks Options.PathSteps against the
// float64 reference on a window of 70 tokens (a full key block and a
// partial one), for both PaTH variants and both layers; and that the
// comparison fails when the reference drops beta or the first position
// (the sum must be over exactly the window's steps, each weighted by its
// strength).
func TestPathStepSumsMatchReference(t *testing.T) {
	const L = 70
	for _, v := range []string{"path", "path-fox"} {
		t.Run(v, func(t *testing.T) {
			a := variantArch(v)
			set := weightstest.RandomSet(t, a, 31)
			m, err := Load(set)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(7, 8))
			toks := make([]int32, L)
			for i := range toks {
				toks[i] = int32(r.IntN(a.Vocab))
			}
			res, err := m.LogProbs(context.Background(), toks, nil, Options{PathSteps: true, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.PathSteps) != a.Layers*a.Heads {
				t.Fatalf("%d step sums, want layers x heads = %d", len(res.PathSteps), a.Layers*a.Heads)
			}
			for k, s := range res.PathSteps {
				if s.Layer != k/a.Heads || s.Head != k%a.Heads || s.Count != L || s.D != a.DHead() || len(s.Sum) != s.D*s.D {
					t.Fatalf("step sum %d is layer %d head %d, %d positions, d = %d (%d values); want layer-major, %d positions, d = %d",
						k, s.Layer, s.Head, s.Count, s.D, len(s.Sum), L, a.DHead())
				}
			}
			view := &weightsView{arch: a, set: set}
			id := func(b float64) float64 { return b }
			if e := stepSumError(res.PathSteps, refStepSums(t, view, toks, 0, id), a.Heads, L); e > 1 {
				t.Fatalf("step sums disagree with the float64 reference by %.3g tolerances", e)
			}
			for what, want := range map[string][][][]float64{
				"beta dropped":            refStepSums(t, view, toks, 0, func(float64) float64 { return 1 }),
				"first position left out": refStepSums(t, view, toks, 1, id),
			} {
				if e := stepSumError(res.PathSteps, want, a.Heads, L); e <= 1 {
					t.Errorf("a reference with %s still agrees (%.3g tolerances): the comparison cannot fail", what, e)
				}
			}
		})
	}
}

// TestPathStepsOnlyForPath: a model without Householder steps refuses
// PathSteps with an error that names the variants that have them.
func TestPathStepsOnlyForPath(t *testing.T) {
	set := weightstest.RandomSet(t, variantArch("rope"), 1)
	m, err := Load(set)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.LogProbs(context.Background(), []int32{1, 2, 3}, nil, Options{PathSteps: true})
	if err == nil || !strings.Contains(err.Error(), "path, path-fox") {
		t.Fatalf("PathSteps on rope: %v, want an error naming path, path-fox", err)
	}
}

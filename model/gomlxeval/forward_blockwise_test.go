package gomlxeval

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"routebench/modelspec"
	"routebench/modelspec/weights"
	"routebench/modelspec/weights/weightstest"
)

// randomSet is an untrained model of every variant's parts with
// larger-than-init weights (weightstest.RandomSet), small enough for
// full attention.
func randomSet(t *testing.T, variant string) (*weights.Set, modelspec.Config) {
	t.Helper()
	c := modelspec.Config{Variant: variant, Profile: "test", Vocab: 29, DModel: 16, Layers: 2, Heads: 4, DHidden: 24, Context: 32,
		SigmaMax: 1, SigmaMin: 0.35, Seed: 1}
	return weightstest.RandomSet(t, c.Arch(), 3), c
}

// The blockwise evaluator against Forward (full attention, O(L^2)) for
// every variant, with chunks that divide the window, that do not, and that
// exceed it: the same log-probabilities to float32 accuracy.
func TestLogProbsBlockwiseMatchesForward(t *testing.T) {
	const L = 45
	for _, v := range modelspec.Variants() {
		if vv, _ := modelspec.LookupVariant(v); vv.Householder || vv.AngleProj {
			continue // LogProbsBlockwise returns an error for PaTH and projected-angle weights
		}
		t.Run(v, func(t *testing.T) {
			set, c := randomSet(t, v)
			rng := rand.New(rand.NewPCG(7, 8))
			x := make([]int32, L+1)
			for i := range x {
				x[i] = int32(rng.IntN(c.Vocab))
			}
			logits, err := Forward(set, x[:L])
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float64, L)
			for i, row := range logits {
				want[i] = weightstest.LogProb(row, x[i+1])
			}
			for _, chunk := range []int{1, 9, 16, 64} {
				got, err := LogProbsBlockwise(set, x[:L], x[1:], chunk, "go")
				if err != nil {
					t.Fatalf("chunk %d: %v", chunk, err)
				}
				worst := 0.0
				for i := range want {
					worst = math.Max(worst, math.Abs(got[i]-want[i])/(1+math.Abs(want[i])))
				}
				if worst > 2e-5 {
					t.Errorf("chunk %d: log-probs differ from Forward's by %.3g (relative to 1+|lp|)", chunk, worst)
				}
			}
		})
	}
}

func TestLogProbsBlockwiseBadInput(t *testing.T) {
	set, c := randomSet(t, "alibi")
	for _, tc := range []struct {
		tokens, targets []int32
		chunk           int
		want            string
	}{
		{[]int32{1, 2}, []int32{2}, 4, "as many targets (1) as tokens (2"},
		{[]int32{1, 2}, []int32{2, 3}, 0, "chunk 0 must be positive"},
		{[]int32{1, int32(c.Vocab)}, []int32{2, 3}, 4, "outside vocabulary"},
	} {
		_, err := LogProbsBlockwise(set, tc.tokens, tc.targets, tc.chunk, "go")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v/%v chunk %d: error %v, want %q", tc.tokens, tc.targets, tc.chunk, err, tc.want)
		}
	}
}

// A kerple-log file without a block's p_h: both evaluators refuse it naming
// the tensor, never a plain attention.
func TestKerpleMissingTensor(t *testing.T) {
	set, _ := randomSet(t, "kerple-log")
	var ts []weights.Tensor
	for _, x := range set.Tensors {
		if x.Name != "block001/kerple_p" {
			ts = append(ts, x)
		}
	}
	noP, err := weights.NewSet(set.Arch, ts)
	if err != nil {
		t.Fatal(err)
	}
	_, errF := Forward(noP, []int32{1, 2})
	_, errB := LogProbsBlockwise(noP, []int32{1, 2}, []int32{2, 3}, 4, "go")
	for name, err := range map[string]error{"Forward": errF, "LogProbsBlockwise": errB} {
		if err == nil || !strings.Contains(err.Error(), `"block001/kerple_p"`) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s without block001/kerple_p: error %v, want one naming the tensor and the evaluator", name, err)
		}
	}
}

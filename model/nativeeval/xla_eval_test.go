package nativeeval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"routebench/model/gomlxeval"
	"routebench/model/native"
	"routebench/modelspec/weights"
	"routebench/modelspec/weights/weightstest"
)

// The GPU check's evaluator comparison (scripts/gpu-check.sh, step
// eval-xla): the paper model's shape (random weights, the costliest variant)
// evaluated by gomlx's blockwise evaluator on XLA and by this native one on
// the host's cores, at each length of ROUTEBENCH_XLA_EVAL_LENGTHS (default
// 4096,65536), chunks of ROUTEBENCH_XLA_EVAL_CHUNK (default 1024). It logs
// both times (XLA's first call includes compilation, so it runs twice) and
// their agreement: the figures that choose the paper profile's evaluator.
// It needs a plugin, like model.TestXLAAgreesWithGo.
func TestXLABlockwiseEval(t *testing.T) {
	plugin := os.Getenv("ROUTEBENCH_XLA_PLUGIN")
	if plugin == "" {
		t.Skip("set ROUTEBENCH_XLA_PLUGIN to a PJRT plugin (absolute path) and build without -tags noxla to compare the XLA evaluator with the native one")
	}
	lengths, err := envInts("ROUTEBENCH_XLA_EVAL_LENGTHS", "4096,65536")
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := envInts("ROUTEBENCH_XLA_EVAL_CHUNK", "1024")
	if err != nil || len(chunks) != 1 {
		t.Fatalf("ROUTEBENCH_XLA_EVAL_CHUNK: want one chunk size (%v)", err)
	}
	set := weightstest.RandomSet(t, weightstest.PaperArch(), 1)
	// TF32 matmuls (XLA's default on the GPU) keep 10 mantissa bits.
	compareEvaluators(t, set, "xla:"+plugin, lengths, chunks[0], 1e-2)
}

// TestBlockwiseMatchesNative runs the same comparison on the Go backend
// for every variant at a small shape: gomlx's blockwise evaluator and the
// native one are two implementations of ARCHITECTURE.md.
func TestBlockwiseMatchesNative(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			set := weightstest.RandomSet(t, variantArch(v), 11)
			if set.Arch.Householder { // not implemented there: refused by name, never a silent plain attention
				_, err := gomlxeval.LogProbsBlockwise(set, []int32{1, 2}, []int32{2, 3}, 16, "go")
				if err == nil || !strings.Contains(err.Error(), "Householder") {
					t.Fatalf("blockwise gomlx on %s weights: want a refusal naming the transport, got %v", v, err)
				}
				return
			}
			if set.Arch.AngleProj { // likewise for learned-proj-qkv's per-block angles
				_, err := gomlxeval.LogProbsBlockwise(set, []int32{1, 2}, []int32{2, 3}, 16, "go")
				if err == nil || !strings.Contains(err.Error(), "angle_proj") {
					t.Fatalf("blockwise gomlx on %s weights: want a refusal naming angle_proj, got %v", v, err)
				}
				return
			}
			compareEvaluators(t, set, "go", []int{70}, 16, 2e-5)
		})
	}
}

// compareEvaluators evaluates random windows of each length with
// gomlxeval.LogProbsBlockwise on backend (twice: the first call compiles) and
// with the native evaluator, logs both times, and fails if the
// log-probabilities differ by more than tol relative to 1+|log p|.
func compareEvaluators(t *testing.T, set *weights.Set, backend string, lengths []int, chunk int, tol float64) {
	t.Helper()
	a := set.Arch
	m, err := Load(set)
	if err != nil {
		t.Fatal(err)
	}
	for _, L := range lengths {
		r := rand.New(rand.NewPCG(uint64(L), 9))
		toks := make([]int32, L+1)
		for i := range toks {
			toks[i] = int32(r.IntN(a.Vocab))
		}
		var xlaSec [2]float64
		var got []float64
		for i := range xlaSec {
			start := time.Now()
			got, err = gomlxeval.LogProbsBlockwise(set, toks[:L], toks[1:], chunk, backend)
			if err != nil {
				t.Fatalf("L=%d: %s: %v", L, backend, err)
			}
			xlaSec[i] = time.Since(start).Seconds()
		}
		start := time.Now()
		res, err := m.LogProbs(context.Background(), toks[:L], toks[1:], Options{})
		if err != nil {
			t.Fatalf("L=%d: native: %v", L, err)
		}
		nativeSec := time.Since(start).Seconds()
		var worst, nllX, nllN float64
		for i, want := range res.LogProbs {
			worst = math.Max(worst, math.Abs(got[i]-want)/(1+math.Abs(want)))
			nllX -= got[i]
			nllN -= want
		}
		t.Logf("L=%d chunk %d: blockwise on %s: %.2f s (first call, with compilation), %.2f s (second; %.0f tokens/s); native %.2f s (%.0f tokens/s, %s); log-probs max rel diff %.2g; mean NLL blockwise %.6f, native %.6f",
			L, chunk, backend, xlaSec[0], xlaSec[1], float64(L)/xlaSec[1], nativeSec, float64(L)/nativeSec, native.KernelName(), worst, nllX/float64(L), nllN/float64(L))
		if worst > tol {
			t.Errorf("L=%d: blockwise (%s) and native log-probs differ by %.3g relative (tolerance %g)", L, backend, worst, tol)
		}
	}
}

func envInts(name, def string) ([]int, error) {
	s := os.Getenv(name)
	if s == "" {
		s = def
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s=%q: want positive integers separated by commas", name, s)
		}
		out = append(out, n)
	}
	return out, nil
}

package evaluate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"routebench/model/nativeeval"
	"routebench/modelspec"
	"routebench/modelspec/ropescale"
	"routebench/modelspec/weights/weightstest"
	"routebench/pipeline"
	"routebench/stages/tokenize/shards"
)

// TestRopeScalingPasses: under an extension and DesignPrefixes, each
// length L > T scores the long windows' first L positions in a pass of its
// own at s = L / T (equal to a direct pass, and not the longest pass's
// prefix at its s, the shortcut an extension cannot take), and T is plain
// RoPE's T on the same windows bit for bit.
func TestRopeScalingPasses(t *testing.T) {
	ds := prefixDataset(t)
	const T = 16
	a := modelspec.Config{Variant: "rope", Profile: "test", Vocab: 257, DModel: 32, Layers: 2, Heads: 2, DHidden: 48, Context: T}.Arch()
	set := weightstest.RandomSet(t, a, 5)
	m, err := nativeeval.Load(set)
	if err != nil {
		t.Fatal(err)
	}
	plain := NewConfig("rope", "test", T, []int{1, 2, 8}, 4, 3)
	plain.Design = DesignPrefixes
	cfg := plain
	cfg.RopeScaling = ropescale.YaRN
	if got := cfg.stageName(); got != "evaluate/rope+yarn" {
		t.Fatalf("stage name %q", got)
	}
	rc := &pipeline.RunContext{Context: context.Background(), Logf: t.Logf, Progress: func(int64, int64, string) {}}
	res, done, err := evaluate(rc, cfg, set, ds)
	if err != nil {
		t.Fatal(err)
	}
	ref, _, err := evaluate(rc, plain, set, ds)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(cfg.WindowsAt(T)*T) + 4*int64(2*T+8*T); done != want {
		t.Errorf("%d tokens scored, want %d (a pass per length per window)", done, want)
	}
	held, err := ds.Tokens(shards.SplitHeldOut)
	if err != nil {
		t.Fatal(err)
	}
	for k, lr := range res.Lengths {
		L := lr.L
		if L == T {
			for w := range lr.WindowLoss {
				if lr.WindowLoss[w] != ref.Lengths[k].WindowLoss[w] {
					t.Fatalf("T window %d: loss %v, plain rope %v (s = 1 must be plain rope)", w, lr.WindowLoss[w], ref.Lengths[k].WindowLoss[w])
				}
			}
			continue
		}
		if lr.ContextGain != nil {
			t.Errorf("L=%d: context gain under an extension", L)
		}
		for w, sp := range res.Spans {
			win := make([]int32, sp.Tokens)
			if err := held.Read(win, sp.Offset); err != nil {
				t.Fatal(err)
			}
			direct := func(s float64) float64 {
				r, err := m.LogProbs(context.Background(), win[:L], win[1:L+1], nativeeval.Options{
					RopeScaling: ropescale.Scaling{Method: "yarn", Factor: s, TrainLen: T}})
				if err != nil {
					t.Fatal(err)
				}
				var sum float64
				for _, lp := range r.LogProbs {
					sum -= lp
				}
				return sum / float64(L)
			}
			if want := direct(float64(L) / T); !near(lr.WindowLoss[w], want) {
				t.Errorf("L=%d window %d: loss %v, direct pass at s=%d %v", L, w, lr.WindowLoss[w], L/T, want)
			}
			if L < 8*T && near(lr.WindowLoss[w], direct(8)) {
				t.Errorf("L=%d window %d: the loss is also the longest length's s: s = L/T is not what was applied", L, w)
			}
			if near(lr.WindowLoss[w], ref.Lengths[k].WindowLoss[w]) {
				t.Errorf("L=%d window %d: the extension's loss is plain rope's %v", L, w, lr.WindowLoss[w])
			}
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// TestRopeScalingConfig: without an extension the config's JSON (and so
// every other evaluate stage's key) carries no new field; unknown methods
// and non-rope models are refused.
func TestRopeScalingConfig(t *testing.T) {
	b, err := json.Marshal(NewConfig("rope", "test", 16, []int{1, 2}, 4, 3))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "rope_scaling") {
		t.Fatalf("plain config JSON %s mentions rope_scaling", b)
	}
	bad := NewConfig("rope", "test", 16, []int{1, 2}, 4, 3)
	bad.RopeScaling = "xpos"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "xpos") {
		t.Fatalf("Validate with method xpos: %v", err)
	}
	ds := prefixDataset(t)
	a := modelspec.Config{Variant: "random-qk", Profile: "test", Vocab: 257, DModel: 32, Layers: 2, Heads: 2, DHidden: 48, Context: 16}.Arch()
	cfg := NewConfig("random-qk", "test", 16, []int{1, 2}, 2, 3)
	cfg.RopeScaling = "pi"
	rc := &pipeline.RunContext{Context: context.Background(), Logf: t.Logf, Progress: func(int64, int64, string) {}}
	if _, _, err := evaluate(rc, cfg, weightstest.RandomSet(t, a, 5), ds); err == nil {
		t.Fatal("pi on a random-qk model: want an error")
	}
}

package stepspeed

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"routebench/modelspec"
	"routebench/pipeline"
)

func smokeRun(variant string) modelspec.Config {
	return modelspec.Config{Variant: variant, Profile: "test", Vocab: 257, DModel: 32, Layers: 2, Heads: 2, DHidden: 128,
		Context: 32, Batch: 4, Steps: 10, Warmup: 2, LR: 3e-3, MinLR: 1e-4, Clip: 1, Seed: 1, SigmaMax: 1, SigmaMin: 0.35, Trainer: modelspec.TrainerNative}
}

// The stage times every variant in every round, the baseline's ratios are
// exactly 1, the others' are its times divided within the round, and the
// table names every variant; bad configs are refused before any timing.
func TestStageTimesEveryVariant(t *testing.T) {
	cfg := Config{Baseline: "rope", Rounds: 3, Steps: 1}
	for _, v := range []string{"nope", "rope", "random-qkv", "path"} {
		cfg.Runs = append(cfg.Runs, smokeRun(v))
	}
	out := t.TempDir()
	rc := &pipeline.RunContext{Context: context.Background(), Stage: Stage(cfg), OutDir: out, WorkDir: t.TempDir(),
		Logf: t.Logf, Progress: func(int64, int64, string) {}}
	if err := run(rc, cfg); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var res []Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 {
		t.Fatalf("%d results, want 4", len(res))
	}
	rope := res[1]
	for _, r := range res {
		if len(r.Wall) != 3 || len(r.CPU) != 3 || len(r.CPURatio) != 3 || r.Trainer != modelspec.TrainerNative {
			t.Fatalf("%s: %+v: want 3 rounds of the native trainer", r.Variant, r)
		}
		for k := range r.Wall {
			if r.Wall[k] <= 0 {
				t.Errorf("%s round %d: wall %g", r.Variant, k, r.Wall[k])
			}
			if want := r.Wall[k] / rope.Wall[k]; r.WallRatio[k] != want {
				t.Errorf("%s round %d: wall ratio %g, want %g", r.Variant, k, r.WallRatio[k], want)
			}
		}
	}
	for _, x := range append(rope.WallRatio, rope.CPURatio...) {
		if x != 1 {
			t.Errorf("the baseline's own ratio is %g", x)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, MarkdownFile))
	for _, v := range []string{"| nope | native |", "| path | native |", "CPU / rope"} {
		if !strings.Contains(string(md), v) {
			t.Errorf("table lacks %q:\n%s", v, md)
		}
	}
	for _, bad := range []Config{
		{Runs: cfg.Runs, Baseline: "alibi", Rounds: 1, Steps: 1},
		{Runs: cfg.Runs, Baseline: "rope", Rounds: 0, Steps: 1},
		{Baseline: "rope", Rounds: 1, Steps: 1},
	} {
		if err := run(rc, bad); err == nil {
			t.Errorf("config %+v accepted", bad)
		}
	}
}

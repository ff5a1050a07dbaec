package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"routebench/artifacts"
	"routebench/internal/procstat"
)

// toyPlan is a three-stage DAG: gen -> double -> sum, plus an independent
// stage. Its Runs write deterministic outputs derived from config and inputs.
type toyConfig struct {
	N    int     `json:"n"`
	Seed uint64  `json:"seed"`
	Rate float64 `json:"rate"`
}

func toyPlan(t testing.TB, cfg toyConfig, runs map[string]int) *Plan {
	gen := &Stage{Name: "gen", Kind: "gen", Config: cfg, Code: []string{"routebench/pipeline"},
		Run: func(rc *RunContext) error {
			runs["gen"]++
			return os.WriteFile(filepath.Join(rc.OutDir, "data"), bytes.Repeat([]byte("x"), cfg.N), 0o644)
		}}
	double := &Stage{Name: "double", Kind: "double", Config: map[string]int{"factor": 2},
		Inputs: []Input{{"src", gen}}, Code: []string{"routebench/pipeline"}, Volatile: []string{"timing"},
		Run: func(rc *RunContext) error {
			runs["double"]++
			in, err := rc.Input("src")
			if err != nil {
				return err
			}
			b, err := in.ReadFile("data")
			if err != nil {
				return err
			}
			os.WriteFile(filepath.Join(rc.OutDir, "timing"), []byte(time.Now().String()), 0o644)
			return os.WriteFile(filepath.Join(rc.OutDir, "data"), append(b, b...), 0o644)
		}}
	other := &Stage{Name: "other", Kind: "other", Config: "fixed", Code: []string{"routebench/pipeline"},
		Run: func(rc *RunContext) error {
			runs["other"]++
			return os.WriteFile(filepath.Join(rc.OutDir, "o"), []byte("o"), 0o644)
		}}
	p, err := NewPlan("toy", []*Stage{double, other, gen})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func quietRunner(t testing.TB) *Runner {
	s, err := artifacts.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Runner{Store: s, Log: &bytes.Buffer{}}
}

func TestPlanOrdersInputsFirst(t *testing.T) {
	p := toyPlan(t, toyConfig{N: 3}, map[string]int{})
	pos := map[string]int{}
	for i, s := range p.Stages {
		pos[s.Name] = i
	}
	if pos["gen"] > pos["double"] {
		t.Fatalf("gen after double: %v", pos)
	}
	if _, err := p.Closure("nosuch"); err == nil || !strings.Contains(err.Error(), "unknown stage") {
		t.Fatalf("unknown stage: %v", err)
	}
}

func TestNoOpRerunExecutesNothing(t *testing.T) {
	r := quietRunner(t)
	runs := map[string]int{}
	executed := 0
	r.OnExecute = func(*Stage) { executed++ }
	p := toyPlan(t, toyConfig{N: 5}, runs)
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if executed != 3 {
		t.Fatalf("first run executed %d stages, want 3", executed)
	}
	executed = 0
	cpu0 := procstat.CPUSeconds()
	res, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if executed != 0 {
		t.Fatalf("no-op rerun executed %d stages", executed)
	}
	if d := procstat.CPUSeconds() - cpu0; d > 5 {
		t.Fatalf("no-op rerun took %.2f CPU-s (want < 5: CPU time, so that a busy machine cannot fail it)", d)
	}
	for _, rec := range res.Records {
		if rec.Result != "hit" {
			t.Fatalf("%s: %s", rec.Stage, rec.Result)
		}
	}
	got, _ := res.Artifacts["double"].ReadFile("data")
	if string(got) != "xxxxxxxxxx" {
		t.Fatalf("double output %q", got)
	}
	// Changing gen's config reruns gen and its consumer, not the other stage.
	runs = map[string]int{}
	if _, err := r.Run(context.Background(), toyPlan(t, toyConfig{N: 6}, runs)); err != nil {
		t.Fatal(err)
	}
	if runs["gen"] != 1 || runs["double"] != 1 || runs["other"] != 0 {
		t.Fatalf("after a config change ran %v", runs)
	}
}

func keyOf(t *testing.T, s *Stage, digests map[string]string) artifacts.ActionID {
	t.Helper()
	k, err := ComputeKey(s, digests)
	if err != nil {
		t.Fatal(err)
	}
	return k.ID
}

func TestKeySensitivity(t *testing.T) {
	base := toyConfig{N: 1, Seed: 2, Rate: 0.5}
	p := toyPlan(t, base, map[string]int{})
	gen, _ := p.Stage("gen")
	k0 := keyOf(t, gen, nil)
	for name, cfg := range map[string]toyConfig{
		"n": {N: 2, Seed: 2, Rate: 0.5}, "seed": {N: 1, Seed: 3, Rate: 0.5}, "rate": {N: 1, Seed: 2, Rate: 0.5000001},
	} {
		g2, _ := toyPlan(t, cfg, map[string]int{}).Stage("gen")
		if keyOf(t, g2, nil) == k0 {
			t.Errorf("changing config field %s did not change the key", name)
		}
	}
	if keyOf(t, gen, nil) != k0 {
		t.Error("key is not stable")
	}
	double, _ := p.Stage("double")
	if keyOf(t, double, map[string]string{"src": "aa"}) == keyOf(t, double, map[string]string{"src": "ab"}) {
		t.Error("changing an input artifact did not change the key")
	}
}

// KeyName stands in for Name in the key: a sweep's renamed stage keeps the
// key of the stage it is, and nothing but the name it hashes changes.
func TestKeyNameReplacesName(t *testing.T) {
	gen, _ := toyPlan(t, toyConfig{N: 1}, map[string]int{}).Stage("gen")
	k0 := keyOf(t, gen, nil)
	renamed := *gen
	renamed.Name = "point=1/gen"
	if keyOf(t, &renamed, nil) == k0 {
		t.Fatal("renaming a stage kept its key")
	}
	renamed.KeyName = gen.Name
	if keyOf(t, &renamed, nil) != k0 {
		t.Fatal("a renamed stage with KeyName = the old name has another key")
	}
	renamed.KeyName = "other"
	if keyOf(t, &renamed, nil) == k0 {
		t.Fatal("KeyName is not hashed")
	}
}

func TestVerifyCatchesNondeterminism(t *testing.T) {
	r := quietRunner(t)
	n := 0
	flaky := &Stage{Name: "flaky", Kind: "flaky", Config: 1, Code: []string{"routebench/pipeline"},
		Run: func(rc *RunContext) error {
			n++
			return os.WriteFile(filepath.Join(rc.OutDir, "out"), []byte{byte(n)}, 0o644)
		}}
	p, _ := NewPlan("t", []*Stage{flaky})
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	r.Verify = true
	_, err := r.Run(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "not deterministic") {
		t.Fatalf("verify did not fail loudly: %v", err)
	}
	// The failed verify threw its recomputation away: the entry still holds
	// the first run's output, and a second verify fails against it again.
	key, err := ComputeKey(flaky, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := r.Store.Get(key.ID)
	if err != nil {
		t.Fatalf("the cached entry is gone after a failed verify: %v", err)
	}
	if b, err := a.ReadFile("out"); err != nil || len(b) != 1 || b[0] != 1 {
		t.Fatalf("after a failed verify the entry holds %v (%v), want the first run's output [1]", b, err)
	}
	if _, err := r.Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "left as it was") {
		t.Fatalf("a second verify: want it to fail against the kept entry, got %v", err)
	}
	// A deterministic stage with a volatile file verifies.
	r2 := quietRunner(t)
	tp := toyPlan(t, toyConfig{N: 2}, map[string]int{})
	if _, err := r2.Run(context.Background(), tp); err != nil {
		t.Fatal(err)
	}
	r2.Verify = true
	res, err := r2.Run(context.Background(), tp)
	if err != nil {
		t.Fatalf("verify of a deterministic plan: %v", err)
	}
	for _, rec := range res.Records {
		if rec.Result != "verified" {
			t.Fatalf("%s: %s", rec.Stage, rec.Result)
		}
	}
}

func TestFailedStageCommitsNothingAndStatusExplains(t *testing.T) {
	r := quietRunner(t)
	fail := true
	s := &Stage{Name: "s", Kind: "s", Config: 1, Code: []string{"routebench/pipeline"},
		Run: func(rc *RunContext) error {
			os.WriteFile(filepath.Join(rc.OutDir, "partial"), []byte("half"), 0o644)
			os.WriteFile(filepath.Join(rc.WorkDir, "ckpt"), []byte("step 5"), 0o644)
			if fail {
				return errors.New("boom")
			}
			if _, err := os.Stat(filepath.Join(rc.WorkDir, "ckpt")); err != nil {
				return errors.New("checkpoint not kept across attempts")
			}
			if _, err := os.Stat(filepath.Join(rc.OutDir, "partial")); err != nil {
				return err
			}
			return nil
		}}
	p, _ := NewPlan("t", []*Stage{s})
	if _, err := r.Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "stage s failed: boom") {
		t.Fatalf("want failure naming the stage, got %v", err)
	}
	lines, _, err := r.Status(p)
	if err != nil || lines[0].Cached || lines[0].Reason != "not in the store" {
		t.Fatalf("status after failure: %+v %v", lines, err)
	}
	fail = false
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	lines, _, _ = r.Status(p)
	if !lines[0].Cached {
		t.Fatalf("status after success: %+v", lines)
	}
}

func TestPanicInStageIsAnError(t *testing.T) {
	r := quietRunner(t)
	s := &Stage{Name: "p", Kind: "p", Config: 1, Code: []string{"routebench/pipeline"},
		Run: func(rc *RunContext) error { panic("bug") }}
	p, _ := NewPlan("t", []*Stage{s})
	if _, err := r.Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "panic: bug") {
		t.Fatalf("got %v", err)
	}
}

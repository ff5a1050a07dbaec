package main

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
	"routebench/internal/corpustest"
	"routebench/pipeline"
	"routebench/planner"
)

// gcPlan is a two-stage plan standing for a profile: data -> train, where
// train writes a checkpoint into its work dir and fails while *fail is set
// (an interrupted GPU run that must be able to resume).
func gcPlan(t *testing.T, profile string, n int, fail *bool) *pipeline.Plan {
	t.Helper()
	data := &pipeline.Stage{Name: "data", Kind: "data", Config: n, Code: []string{"routebench/pipeline"},
		Run: func(rc *pipeline.RunContext) error {
			return os.WriteFile(filepath.Join(rc.OutDir, "data"), bytes.Repeat([]byte{byte(n)}, 1000+n), 0o644)
		}}
	train := &pipeline.Stage{Name: "train", Kind: "train", Config: n, Code: []string{"routebench/pipeline"},
		Inputs: []pipeline.Input{{Name: "data", Stage: data}},
		Run: func(rc *pipeline.RunContext) error {
			if err := os.WriteFile(filepath.Join(rc.WorkDir, "ckpt"), []byte("step 7"), 0o644); err != nil {
				return err
			}
			if fail != nil && *fail {
				return errors.New("interrupted")
			}
			return os.WriteFile(filepath.Join(rc.OutDir, "weights"), []byte{byte(n)}, 0o644)
		}}
	p, err := pipeline.NewPlan(profile, []*pipeline.Stage{data, train})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func keysOf(t *testing.T, r *pipeline.Runner, p *pipeline.Plan) map[artifacts.ActionID]bool {
	t.Helper()
	k, err := r.LiveKeys(p)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A --config run's artifacts, and the work dir of its failed stage, are
// roots while its run log is: plain gc keeps them, gc --all and
// gc --older-than 0s remove them. A damaged run log makes gc refuse.
func TestGCKeepsWhatRunLogsName(t *testing.T) {
	store, err := artifacts.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &pipeline.Runner{Store: store, Log: &bytes.Buffer{}}
	ctx := context.Background()
	builtin := gcPlan(t, "smoke", 1, nil) // stands for the built-in profiles
	if _, err := r.Run(ctx, builtin); err != nil {
		t.Fatal(err)
	}
	live := keysOf(t, r, builtin)
	fail := true
	custom := gcPlan(t, "smoke", 2, &fail) // stands for --config FILE: same profile, other keys
	if _, err := r.Run(ctx, custom); err == nil {
		t.Fatal("the interrupted run did not fail")
	}
	customData, _ := custom.Stage("data")
	dataKey := stageKey(t, r, custom, customData)
	lines, _, _ := r.Status(custom)
	trainKey, _ := artifacts.ParseActionID(lines[1].Key)
	garbage := artifacts.ActionID{9} // an entry no log names
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "g"), []byte("garbage"), 0o644)
	if _, err := store.Put(garbage, "garbage", dir); err != nil {
		t.Fatal(err)
	}
	gc := func(o gcOptions, now time.Time) (string, error) {
		var out bytes.Buffer
		err := collectGarbage(store, live, o, now, &out)
		return out.String(), err
	}
	hit := func(a artifacts.ActionID) bool { _, err := store.Get(a); return err == nil }
	// The failed attempt's checkpoint, in its own work dir under the key's.
	ckpts, _ := filepath.Glob(filepath.Join(store.WorkDir(trainKey), "*", "scratch", "ckpt"))
	if len(ckpts) != 1 {
		t.Fatalf("the failed train stage left checkpoints %v, want one in its attempt's scratch", ckpts)
	}
	ckpt := ckpts[0]
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	// A damaged log: gc refuses, names the file and the fix, removes nothing.
	bad := filepath.Join(pipeline.RunsDir(store.Root()), "20250101T000000.000-smoke.jsonl")
	os.WriteFile(bad, []byte(`{"stage":"train","key":"`+trainKey.String()[:20]+"\n"), 0o644)
	_, err = gc(gcOptions{}, time.Now())
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "fix or delete the file") || !strings.Contains(err.Error(), "removed nothing") {
		t.Fatalf("gc with a damaged run log: want a refusal naming it and the fix, got %v", err)
	}
	if !hit(garbage) {
		t.Fatal("gc removed an entry although it refused")
	}
	os.Remove(bad)

	out, err := gc(gcOptions{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "2 live in the built-in profiles") || !strings.Contains(out, "2 more named by 2 run logs") {
		t.Fatalf("gc did not say why it kept what it kept:\n%s", out)
	}
	if !hit(dataKey) || !exists(ckpt) {
		t.Fatalf("plain gc removed the --config run's artifact (hit=%v) or checkpoint (%v)", hit(dataKey), exists(ckpt))
	}
	if hit(garbage) {
		t.Fatal("an entry no run log names survived gc")
	}
	for a := range live {
		if !hit(a) {
			t.Fatal("gc removed a live entry")
		}
	}

	// The logs are recent: --older-than 1h keeps them; an hour later it does not.
	if _, err := gc(gcOptions{olderThan: time.Hour, expire: true}, time.Now()); err != nil || !hit(dataKey) {
		t.Fatalf("gc --older-than 1h removed a run of now (err=%v)", err)
	}
	// --all ignores the logs (and leaves them).
	if _, err := gc(gcOptions{all: true}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if hit(dataKey) || exists(ckpt) {
		t.Fatal("gc --all kept what only a run log names")
	}
	logs, _ := filepath.Glob(filepath.Join(pipeline.RunsDir(store.Root()), "*.jsonl"))
	if len(logs) != 2 {
		t.Fatalf("gc --all deleted run logs: %v", logs)
	}

	// The resumed run (a hit for data once recomputed): --older-than 0s
	// expires every log, deletes them, and the run's artifacts go.
	fail = false
	if _, err := r.Run(ctx, custom); err != nil {
		t.Fatal(err)
	}
	if _, err := gc(gcOptions{}, time.Now()); err != nil || !hit(dataKey) {
		t.Fatalf("plain gc after the resumed run: err=%v hit=%v", err, hit(dataKey))
	}
	out, err = gc(gcOptions{expire: true}, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if hit(dataKey) || !strings.Contains(out, "3 run logs older than 0s expired, 3 of them deleted") {
		t.Fatalf("gc --older-than 0s: hit=%v\n%s", hit(dataKey), out)
	}
	if logs, _ := filepath.Glob(filepath.Join(pipeline.RunsDir(store.Root()), "*.jsonl")); len(logs) != 0 {
		t.Fatalf("expired logs left: %v", logs)
	}
	for a := range live {
		if !hit(a) {
			t.Fatal("gc --older-than 0s removed a live entry")
		}
	}
}

func stageKey(t *testing.T, r *pipeline.Runner, p *pipeline.Plan, s *pipeline.Stage) artifacts.ActionID {
	t.Helper()
	lines, _, err := r.Status(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l.Stage == s.Name {
			a, err := artifacts.ParseActionID(l.Key)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
	}
	t.Fatalf("no stage %s", s.Name)
	return artifacts.ActionID{}
}

// The command itself, with the built-in profiles: a run recorded in the
// store survives `routebench gc` and goes with `routebench gc --all`.
func TestGCCommandKeepsRecordedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every built-in profile's plan")
	}
	if _, err := planner.Build(mustProfile(t, "smoke")); err != nil {
		corpustest.Missing(t, err) // or set ROUTEBENCH_CACHE
	}
	dir := t.TempDir()
	store, err := artifacts.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &pipeline.Runner{Store: store, Log: &bytes.Buffer{}}
	custom := gcPlan(t, "smoke", 3, nil)
	if _, err := r.Run(context.Background(), custom); err != nil {
		t.Fatal(err)
	}
	data, _ := custom.Stage("data")
	key := stageKey(t, r, custom, data)
	if err := run(context.Background(), []string{"gc", "--store", dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(key); err != nil {
		t.Fatalf("routebench gc removed a recorded run's artifact: %v", err)
	}
	if err := run(context.Background(), []string{"gc", "--all", "--store", dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(key); !artifacts.IsMiss(err) {
		t.Fatalf("routebench gc --all kept it: %v", err)
	}
}

func mustProfile(t *testing.T, name string) planner.Profile {
	t.Helper()
	p, err := planner.LoadProfile(name, "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

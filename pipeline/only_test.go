package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"routebench/artifacts"
)

// fakeTime is a clock and a sleep that advances it, recording each pause.
type fakeTime struct {
	t      time.Time
	pauses []time.Duration
	onLook func(n int) // called after each pause
}

func (f *fakeTime) now() time.Time { return f.t }
func (f *fakeTime) sleep(_ context.Context, d time.Duration) error {
	f.t = f.t.Add(d)
	f.pauses = append(f.pauses, d)
	if f.onLook != nil {
		f.onLook(len(f.pauses))
	}
	return nil
}

// indexEntry is the path of a cached stage's index entry.
func indexEntry(t *testing.T, r *Runner, p *Plan, stage string) string {
	t.Helper()
	lines, _, err := r.Status(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l.Stage == stage && l.Cached {
			return filepath.Join(r.Store.Root(), "index", l.Key[:2], l.Key)
		}
	}
	t.Fatalf("stage %s is not cached", stage)
	return ""
}

// A job's input hidden from it (an NFS negative lookup; here renamed away)
// and back within the wait: the job waits, backing off, and never computes
// the input itself.
func TestRunOnlyWaitsForAHiddenInput(t *testing.T) {
	r := quietRunner(t)
	runs := map[string]int{}
	p := toyPlan(t, toyConfig{N: 4}, runs)
	gen, _ := p.Closure("gen")
	if _, err := r.Run(context.Background(), gen); err != nil {
		t.Fatal(err)
	}
	idx := indexEntry(t, r, p, "gen")
	if err := os.Rename(idx, idx+".hidden"); err != nil {
		t.Fatal(err)
	}
	ft := &fakeTime{t: time.Unix(1e9, 0)}
	ft.onLook = func(n int) {
		if n == 3 {
			os.Rename(idx+".hidden", idx)
		}
	}
	r.Now = ft.now
	res, err := r.RunOnly(context.Background(), p, "double", OnlyOptions{InputWait: time.Minute, Backoff: time.Second, MaxBackoff: 3 * time.Second, Sleep: ft.sleep})
	if err != nil {
		t.Fatal(err)
	}
	if runs["gen"] != 1 || runs["double"] != 1 || runs["other"] != 0 {
		t.Fatalf("runs %v: want gen once (before it was hidden), double once, other never", runs)
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}; !equalDurations(ft.pauses, want) {
		t.Fatalf("pauses %v, want %v (doubling, capped)", ft.pauses, want)
	}
	if res.Artifacts["double"] == nil || res.Artifacts["gen"] == nil {
		t.Fatalf("artifacts %v: want gen (found) and double (ran)", res.Artifacts)
	}
}

// An input still missing when the wait ends: the job fails naming its key,
// having computed nothing.
func TestRunOnlyFailsNamingTheMissingKey(t *testing.T) {
	r := quietRunner(t)
	runs := map[string]int{}
	p := toyPlan(t, toyConfig{N: 4}, runs)
	ft := &fakeTime{t: time.Unix(1e9, 0)}
	r.Now = ft.now
	_, err := r.RunOnly(context.Background(), p, "double", OnlyOptions{InputWait: 5 * time.Second, Backoff: time.Second, MaxBackoff: 30 * time.Second, Sleep: ft.sleep})
	var miss *MissingInputError
	if !errors.As(err, &miss) {
		t.Fatalf("err = %v, want a MissingInputError", err)
	}
	key, kerr := r.stageKey(p.Stages[0], nil)
	if p.Stages[0].Name != "gen" || kerr != nil {
		t.Fatalf("first stage %s (%v), want gen", p.Stages[0].Name, kerr)
	}
	if miss.Input != "gen" || !strings.Contains(err.Error(), key.ID.String()) {
		t.Fatalf("err = %v: want input gen named with its key %s", err, key.ID)
	}
	if len(runs) != 0 {
		t.Fatalf("runs %v: a job must compute nothing when its input is missing", runs)
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 2 * time.Second}; !equalDurations(ft.pauses, want) {
		t.Fatalf("pauses %v, want %v (the last one cut to the wait's end)", ft.pauses, want)
	}
}

// A key other than the submitter's fails at once with both keys, before
// anything runs.
func TestRunOnlyKeyMismatch(t *testing.T) {
	r := quietRunner(t)
	runs := map[string]int{}
	p := toyPlan(t, toyConfig{N: 4}, runs)
	planned := strings.Repeat("ab", 32)
	_, err := r.RunOnly(context.Background(), p, "gen", OnlyOptions{ExpectKey: planned})
	var km *KeyMismatchError
	if !errors.As(err, &km) || !strings.Contains(err.Error(), planned) || !strings.Contains(err.Error(), km.Got) || len(km.Got) != 64 {
		t.Fatalf("err = %v, want a key mismatch naming both keys", err)
	}
	if len(runs) != 0 {
		t.Fatalf("runs %v after a key mismatch, want none", runs)
	}
	// The control: the right key runs.
	key, _ := r.stageKey(p.Stages[0], nil)
	if _, err := r.RunOnly(context.Background(), p, "gen", OnlyOptions{ExpectKey: key.ID.String()}); err != nil || runs["gen"] != 1 {
		t.Fatalf("with the planned key: err %v, runs %v", err, runs)
	}
}

// Two attempts of one stage at once on one store, without flock (Lustre
// noflock): B runs and commits the stage while A is in the middle of it.
// B must not touch A's files, and A's later commit must keep B's entry.
func TestAttemptsNeverShareWorkDirs(t *testing.T) {
	t.Setenv(artifacts.NoFlockEnv, "1")
	a := quietRunner(t)
	a.Attempt = "job1.attempt0"
	b := &Runner{Store: a.Store, Log: a.Log, Attempt: "job2.attempt0"}
	var plan *Plan
	var entryAfterB []byte
	var aOut string
	calls := 0
	s := &Stage{Name: "gen", Kind: "gen", Config: 1, Code: []string{"routebench/pipeline"}, Run: func(rc *RunContext) error {
		calls++
		if err := os.WriteFile(filepath.Join(rc.OutDir, "half"), []byte("a"), 0o644); err != nil {
			return err
		}
		if calls == 1 { // attempt A: let B do the whole stage now
			aOut = rc.OutDir
			if _, err := b.Run(context.Background(), plan); err != nil {
				return err
			}
			var err error
			if entryAfterB, err = os.ReadFile(indexEntry(t, b, plan, "gen")); err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(rc.OutDir, "half")); err != nil {
				t.Errorf("attempt B removed attempt A's output: %v", err)
			}
		}
		return os.WriteFile(filepath.Join(rc.OutDir, "rest"), []byte("b"), 0o644)
	}}
	var err error
	if plan, err = NewPlan("toy", []*Stage{s}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("the stage ran %d times, want twice (A and B)", calls)
	}
	if filepath.Base(filepath.Dir(aOut)) != "job1.attempt0" {
		t.Fatalf("attempt A wrote to %s, want a dir named after its attempt", aOut)
	}
	if rec := res.Records[0]; rec.Result != "ran" || !strings.Contains(rec.Reason, "another attempt committed it first") {
		t.Fatalf("A's record %+v: want ran, noting B's commit was kept", rec)
	}
	entry, err := os.ReadFile(indexEntry(t, a, plan, "gen"))
	if err != nil {
		t.Fatal(err)
	}
	if string(entry) != string(entryAfterB) {
		t.Fatal("A's commit replaced B's index entry: the first commit must win")
	}
	if _, err := os.Stat(filepath.Dir(filepath.Dir(aOut))); !os.IsNotExist(err) {
		t.Fatalf("the key's work dir is left after both attempts finished: %v", err)
	}
}

// A new attempt starts from the checkpoint an earlier, failed attempt left
// in its own scratch, which stays that attempt's.
func TestAttemptResumesFromAnEarlierAttemptsScratch(t *testing.T) {
	a := quietRunner(t)
	a.Attempt = "job7.attempt0"
	seen := ""
	s := &Stage{Name: "train", Kind: "train", Config: 1, Code: []string{"routebench/pipeline"}, Run: func(rc *RunContext) error {
		if b, err := os.ReadFile(filepath.Join(rc.WorkDir, "checkpoint")); err == nil {
			seen = string(b)
			return os.WriteFile(filepath.Join(rc.OutDir, "w"), b, 0o644)
		}
		os.WriteFile(filepath.Join(rc.WorkDir, ".checkpoint.tmp-1"), []byte("torn"), 0o644)
		os.WriteFile(filepath.Join(rc.WorkDir, "checkpoint"), []byte("step 5"), 0o644)
		return errors.New("preempted")
	}}
	plan, err := NewPlan("toy", []*Stage{s})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), plan); err == nil {
		t.Fatal("the first attempt should fail")
	}
	b := &Runner{Store: a.Store, Log: a.Log, Attempt: "job7.attempt1"}
	if _, err := b.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if seen != "step 5" {
		t.Fatalf("the second attempt saw checkpoint %q, want the first attempt's \"step 5\"", seen)
	}
	old, _ := filepath.Glob(filepath.Join(a.Store.Root(), "work", "*", "job7.attempt0", "scratch", "checkpoint"))
	if len(old) != 1 {
		t.Fatalf("the failed attempt's checkpoint was moved or removed (found %v): its owner may still run", old)
	}
	if left, _ := filepath.Glob(filepath.Join(a.Store.Root(), "work", "*", "job7.attempt1")); len(left) != 0 {
		t.Fatalf("the successful attempt left its dir %v", left)
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

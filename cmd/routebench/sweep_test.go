package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sweepFixture writes a corpus of 400 short documents and a two-point
// sweep over it (smoke profile, 2 training steps, one length), returning
// the sweep file and a store.
func sweepFixture(t *testing.T) (file, store string) {
	t.Helper()
	dir := t.TempDir()
	corpus := docsCorpus(t, dir, 400)
	file = filepath.Join(dir, "tiny.json")
	sweep := fmt.Sprintf(`{"profile": "smoke", "set": ["corpus=%s", "variants=rope,random-qk", "steps=2", "length_multipliers=1,2", "windows=2"],
		"axes": [{"key": "sigma_min", "values": [0.2, 0.35]}]}`, corpus)
	if err := os.WriteFile(file, []byte(sweep), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, filepath.Join(dir, "store")
}

// plan --json --sweep lists the sweep's stages with status's keys and, for
// each, a command that runs it with the sweep file (parsed back: the same
// keys); the stages of the point at the profile's sigma_min have the plain
// profile's keys once tokenize is cached. rope does not read sigma_min, so
// its train and evaluate stages are one pair for both points.
func TestPlanJSONSweep(t *testing.T) {
	file, store := sweepFixture(t)
	args := []string{"--sweep", file, "--store", store}
	out := planFor(t, args...)
	if out.Profile != "sweep-tiny" || out.Levels != 4 || len(out.Stages) != 1+2+2*2+1 {
		t.Fatalf("plan: %s, %d levels, %d stages; want sweep-tiny, 4, 8", out.Profile, out.Levels, len(out.Stages))
	}
	keys := statusKeys(t, args...)
	for _, s := range out.Stages {
		want := []string{"routebench", "run", s.Name, "--sweep", file, "--store", store}
		if !slices.Equal(s.Argv, want) {
			t.Errorf("%s: command %v, want %v", s.Name, s.Argv, want)
		}
		if keyOf(s) != keys[s.Name] {
			t.Errorf("%s: key %q, status computes %q", s.Name, keyOf(s), keys[s.Name])
		}
	}
	if err := run(context.Background(), out.Stages[0].Argv[1:]); err != nil { // tokenize
		t.Fatal(err)
	}
	keys = statusKeys(t, args...)
	plain := statusKeys(t, "--profile", "smoke", "--store", store, "--set", "corpus="+filepath.Join(filepath.Dir(file), "docs.jsonl"),
		"--set", "variants=rope,random-qk", "--set", "steps=2", "--set", "length_multipliers=1,2", "--set", "windows=2")
	for sweepName, name := range map[string]string{"train/rope": "train/rope", "sigma_min=0.35/train/random-qk": "train/random-qk"} {
		if keys[sweepName] == "" || keys[sweepName] != plain[name] {
			t.Errorf("%s: key %q, the plain profile's %s has %q", sweepName, keys[sweepName], name, plain[name])
		}
	}
	if keys["sigma_min=0.2/train/random-qk"] == plain["train/random-qk"] {
		t.Error("the sigma_min=0.2 point has the plain profile's training key")
	}
}

// routebench sweep runs every stage and exports the study beside where
// RESULTS.md would go; a rerun is all hits.
func TestSweepCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 4 tiny models: full mode only")
	}
	file, store := sweepFixture(t)
	out := t.TempDir()
	if err := run(context.Background(), []string{"sweep", "--file", file, "--store", store, "--out", out}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "STUDY-tiny.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# routebench study `tiny`", "| axis `sigma_min` | 0.2, 0.35 |", "| `sigma_min=0.2` | rope |", "results/study-tiny/ratio-longest-sigma_min.png"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("STUDY-tiny.md lacks %q:\n%s", want, md)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "results", "study-tiny", "ratio-longest-sigma_min.png")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(out, "RESULTS.md")); err == nil {
		t.Error("a sweep wrote RESULTS.md")
	}
	_, r, plan, err := parseAndSetup("status", []string{"--sweep", file, "--store", store}, false)
	if err != nil {
		t.Fatal(err)
	}
	lines, _, err := r.Status(plan)
	if err != nil {
		t.Fatal(err)
	}
	var pending []string
	for _, l := range lines {
		if !l.Cached {
			pending = append(pending, l.Stage)
		}
	}
	if !reflect.DeepEqual(pending, []string(nil)) {
		t.Fatalf("after the sweep, not cached: %v", pending)
	}
}

// A sweep names its own profile and overrides, and the commands that work
// on a profile's RESULTS.md refuse one, each in one line with the fix.
func TestSweepFlagErrors(t *testing.T) {
	file, store := sweepFixture(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--sweep", file, "--profile", "cpu", "--store", store}, "--profile cannot be combined with a sweep file"},
		{[]string{"status", "--sweep", file, "--set", "steps=3", "--store", store}, "--set cannot be combined"},
		{[]string{"reproduce", "--sweep", file, "--store", store}, "reproduce works on a profile, not a sweep"},
		{[]string{"results", "--sweep", file, "--store", store}, "routebench sweep --file " + file},
		{[]string{"gate", "--sweep", file, "--store", store}, "gate works on a profile"},
		{[]string{"sweep", "--store", store}, "sweep needs --file FILE"},
		{[]string{"sweep", "--file", filepath.Join(filepath.Dir(file), "nope.json"), "--store", store}, "nope.json"},
	} {
		err := run(context.Background(), tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v; want one line with %q", tc.args, err, tc.want)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// planFor runs `routebench plan --json` with args.
// docsCorpus writes n short JSONL documents into dir and returns the file:
// a corpus the smoke profile can tokenize and split.
func docsCorpus(t *testing.T, dir string, n int) string {
	t.Helper()
	corpus := filepath.Join(dir, "docs.jsonl")
	var docs strings.Builder
	for i := range n {
		fmt.Fprintf(&docs, "{\"text\": \"document %d: the quick brown fox jumps over the lazy dog, again and again.\"}\n", i)
	}
	if err := os.WriteFile(corpus, []byte(docs.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return corpus
}

func planFor(t *testing.T, args ...string) planOutput {
	t.Helper()
	var buf bytes.Buffer
	if err := writePlan(&buf, append([]string{"--json"}, args...)); err != nil {
		t.Fatal(err)
	}
	var out planOutput
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatalf("plan --json is not JSON: %v\n%s", err, buf.Bytes())
	}
	return out
}

// statusKeys are the keys `status` computes with args, by stage ("" for none).
func statusKeys(t *testing.T, args ...string) map[string]string {
	t.Helper()
	_, r, plan, err := parseAndSetup("status", args, false)
	if err != nil {
		t.Fatal(err)
	}
	lines, _, err := r.Status(plan)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, l := range lines {
		keys[l.Stage] = l.Key
	}
	return keys
}

func keyOf(s planStage) string {
	if s.Key == nil {
		return ""
	}
	return *s.Key
}

// The plan lists the stages by level with status's keys, and each stage's
// command reproduces the flags: parsed back, it gives the same keys. Once
// tokenize is cached (run by its own command), the train stages have keys.
func TestPlanJSON(t *testing.T) {
	dir := t.TempDir()
	corpus := docsCorpus(t, dir, 400)
	args := []string{"--profile", "smoke", "--corpus", corpus, "--set", "variants=rope,alibi", "--set", `train.steps=3`, "--set", `kernel_speed_lengths=[64]`, "--store", filepath.Join(dir, "store")}
	out := planFor(t, args...)
	if out.Profile != "smoke" || out.Levels != 4 || len(out.Stages) != 9 {
		t.Fatalf("plan: profile %s, %d levels, %d stages; want smoke, 4, 9", out.Profile, out.Levels, len(out.Stages))
	}
	wantLevel := map[string]int{"tokenize": 0, "theory": 0, "kernelspeed": 0, "stepspeed": 0, "train/rope": 1, "train/alibi": 1, "evaluate/rope": 2, "evaluate/alibi": 2, "report": 3}
	keys := statusKeys(t, args...)
	for _, s := range out.Stages {
		if s.Level != wantLevel[s.Name] {
			t.Errorf("%s: level %d, want %d", s.Name, s.Level, wantLevel[s.Name])
		}
		if keyOf(s) != keys[s.Name] {
			t.Errorf("%s: key %q, status computes %q", s.Name, keyOf(s), keys[s.Name])
		}
		if (s.Key == nil) != (len(s.WaitsFor) > 0) || s.Cached {
			t.Errorf("%s: key %v, waits for %v, cached %v: want a key exactly when nothing is waited for, and nothing cached", s.Name, s.Key, s.WaitsFor, s.Cached)
		}
		if s.Argv[1] != "run" || s.Argv[2] != s.Name {
			t.Errorf("%s: command %v does not run the stage", s.Name, s.Argv)
		}
		// The command's flags, parsed back, make the same plan.
		if got := statusKeys(t, s.Argv[3:]...); !reflect.DeepEqual(got, keys) {
			t.Errorf("%s: command %s gives keys %v, want %v", s.Name, s.Command, got, keys)
		}
	}
	byName := map[string]planStage{}
	for _, s := range out.Stages {
		byName[s.Name] = s
	}
	if tr := byName["train/rope"]; !reflect.DeepEqual(tr.Inputs, []string{"tokenize"}) || !reflect.DeepEqual(tr.WaitsFor, []string{"tokenize"}) {
		t.Fatalf("train/rope: inputs %v, waits for %v; want [tokenize] both", tr.Inputs, tr.WaitsFor)
	}

	// Run level 0's tokenize by its command; the train stages then have keys.
	tok := byName["tokenize"]
	if err := run(context.Background(), tok.Argv[1:]); err != nil {
		t.Fatalf("%s: %v", tok.Command, err)
	}
	out = planFor(t, args...)
	keys = statusKeys(t, args...)
	for _, s := range out.Stages {
		if keyOf(s) != keys[s.Name] {
			t.Errorf("after tokenize, %s: key %q, status computes %q", s.Name, keyOf(s), keys[s.Name])
		}
		switch {
		case s.Name == "tokenize" && !s.Cached:
			t.Error("tokenize ran but is not cached")
		case strings.HasPrefix(s.Name, "train/") && (s.Key == nil || len(s.WaitsFor) > 0):
			t.Errorf("%s: key %v, waits for %v after tokenize ran", s.Name, s.Key, s.WaitsFor)
		case strings.HasPrefix(s.Name, "evaluate/") && !reflect.DeepEqual(s.WaitsFor, []string{"train/" + strings.TrimPrefix(s.Name, "evaluate/")}):
			t.Errorf("%s: waits for %v", s.Name, s.WaitsFor)
		}
	}
}

// --corpus is the corpus field: the same plan as --set corpus=....
func TestCorpusFlag(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	os.WriteFile(a, []byte("one document"), 0o644)
	store := filepath.Join(dir, "store")
	byFlag := statusKeys(t, "--profile", "smoke", "--corpus", a, "--store", store)
	bySet := statusKeys(t, "--profile", "smoke", "--set", "corpus="+a, "--store", store)
	if byFlag["tokenize"] == "" || !reflect.DeepEqual(byFlag, bySet) {
		t.Fatalf("--corpus keys %v, --set corpus= keys %v", byFlag, bySet)
	}
	os.WriteFile(a, []byte("another document"), 0o644)
	if other := statusKeys(t, "--profile", "smoke", "--corpus", a, "--store", store); other["tokenize"] == byFlag["tokenize"] {
		t.Fatal("the tokenize key does not follow the --corpus file's content")
	}
}

// --eval-corpus is the eval_corpora field; it adds a tokenize@<name> stage
// (keyed by the file's content) and keeps the training corpus's key.
func TestEvalCorpusFlag(t *testing.T) {
	dir := t.TempDir()
	a, e := filepath.Join(dir, "a.txt"), filepath.Join(dir, "e.txt")
	os.WriteFile(a, []byte("one document"), 0o644)
	os.WriteFile(e, []byte("evaluation text"), 0o644)
	store := filepath.Join(dir, "store")
	plain := statusKeys(t, "--profile", "smoke", "--corpus", a, "--store", store)
	byFlag := statusKeys(t, "--profile", "smoke", "--corpus", a, "--eval-corpus", "ev="+e, "--store", store)
	bySet := statusKeys(t, "--profile", "smoke", "--corpus", a, "--set", "eval_corpora=ev="+e, "--store", store)
	if byFlag["tokenize@ev"] == "" || byFlag["tokenize"] != plain["tokenize"] || !reflect.DeepEqual(byFlag, bySet) {
		t.Fatalf("--eval-corpus keys %v, --set eval_corpora= keys %v, without: %v", byFlag, bySet, plain)
	}
	os.WriteFile(e, []byte("other evaluation text"), 0o644)
	if other := statusKeys(t, "--profile", "smoke", "--corpus", a, "--eval-corpus", "ev="+e, "--store", store); other["tokenize@ev"] == byFlag["tokenize@ev"] {
		t.Fatal("the tokenize@ev key does not follow the --eval-corpus file's content")
	}
}

// A command survives sh: what the shell passes on is argv.
func TestShellJoin(t *testing.T) {
	argv := []string{"routebench", "run", "train/rope", "--set", `variants=["rope","alibi"]`, "--config", "my file's.json", "--set", "kernel_speed_lengths="}
	got, err := exec.Command("sh", "-c", "printf '%s\\n' "+shellJoin(argv)).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(argv, "\n") + "\n"; string(got) != want {
		t.Fatalf("sh sees\n%s\nwant\n%s", got, want)
	}
}

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"routebench/planner"
)

// The pipeline's own export re-keys nothing, on a real git checkout whose
// committed RESULTS.md, results/ and study differ from what a new run
// exports (as after a fresh clone): after reproduce exports into the
// checkout, status finds every stage cached, a second reproduce runs
// nothing, and baseline and gate find the report. (git describe --dirty
// in the report's key failed all three: the export dirtied the checkout.)
func TestExportRekeysNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model: full mode only")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH: the commit label needs it")
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "checkout")
	committed := map[string]string{
		"go.mod":                "module routebench\n", // repoRoot: reproduce exports here
		planner.ResultsFile:     "an older run's results\n",
		"results/ppl_ratio.png": "an older plot\n",
		"STUDY-gap.md":          "an older study\n",
	}
	for name, text := range committed {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	t.Chdir(repo)
	args := []string{"--profile", "smoke", "--store", filepath.Join(dir, "store"),
		"--set", "corpus=" + docsCorpus(t, dir, 400), "--set", "variants=rope", "--set", "steps=2",
		"--set", "length_multipliers=1,2", "--set", "windows=2"}
	ctx := context.Background()
	if err := run(ctx, append([]string{"reproduce"}, args...)); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(planner.ResultsFile); err != nil || string(b) == committed[planner.ResultsFile] {
		t.Fatalf("reproduce did not export %s into the checkout (%v)", planner.ResultsFile, err)
	}
	if out, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err != nil || len(out) == 0 {
		t.Fatalf("the export left the checkout clean (%v): the test would prove nothing", err)
	}

	_, r, plan, err := parseAndSetup("status", args, false)
	if err != nil {
		t.Fatal(err)
	}
	lines, _, err := r.Status(plan)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if !l.Cached {
			t.Errorf("after the export, status: %s would run (%s)", l.Stage, l.Reason)
		}
	}
	base := filepath.Join(dir, "baseline.json")
	if err := run(ctx, append([]string{"baseline", "--baseline", base}, args...)); err != nil {
		t.Errorf("baseline after the export: %v", err)
	} else if err := run(ctx, append([]string{"gate", "--baseline", base}, args...)); err != nil {
		t.Errorf("gate after the export: %v", err)
	}
	res, err := r.Run(ctx, plan) // what a second reproduce runs
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range res.Records {
		if rec.Result != "hit" {
			t.Errorf("second reproduce: %s %s (%s), want a hit", rec.Stage, rec.Result, rec.Reason)
		}
	}
}

package planner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a git checkout in a temp dir with a source file and the
// files the pipeline exports (RESULTS.md, results/, a study) committed, as
// in this repository.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH: the commit label needs it")
	}
	dir := t.TempDir()
	files := map[string]string{"main.go": "package main\n", "RESULTS.md": "old\n", "results/ppl_ratio.png": "old\n", "STUDY-gap.md": "old\n", "docs/x.md": "doc\n"}
	for name, text := range files {
		writeFile(t, filepath.Join(dir, name), text)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func writeFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// What the pipeline exports into the checkout leaves the commit label (and
// so the report's key) as it was; any other change to a tracked file, in
// the work tree or staged, marks it dirty, as git describe --dirty would.
func TestCommitLabelIgnoresExports(t *testing.T) {
	dir := gitRepo(t)
	clean := commitLabel(dir)
	if clean == "unknown" || strings.HasSuffix(clean, "-dirty") || len(clean) != 12 {
		t.Fatalf("fresh checkout: label %q, want a 12-digit revision", clean)
	}
	for _, name := range []string{"RESULTS.md", "results/ppl_ratio.png", "results/results.csv", "results/study-gap/a.png", "STUDY-gap.md", "STUDY-new.md"} {
		writeFile(t, filepath.Join(dir, name), "exported\n")
	}
	if got := commitLabel(dir); got != clean {
		t.Fatalf("after an export: label %q, want %q (the exports re-key the report)", got, clean)
	}
	if got := commitLabel(filepath.Join(dir, "docs")); got != clean {
		t.Fatalf("from a subdirectory: label %q, want %q", got, clean)
	}
	writeFile(t, filepath.Join(dir, "docs/x.md"), "edited\n")
	if got := commitLabel(dir); got != clean+"-dirty" {
		t.Fatalf("an edited tracked file: label %q, want %q", got, clean+"-dirty")
	}
	// Staged (index and work tree agree, HEAD differs): still dirty.
	if out, err := exec.Command("git", "-C", dir, "add", "docs/x.md").CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	if got := commitLabel(dir); got != clean+"-dirty" {
		t.Fatalf("a staged change: label %q, want %q", got, clean+"-dirty")
	}
	if got := commitLabel(t.TempDir()); got != "unknown" {
		t.Fatalf("outside a checkout: label %q, want unknown", got)
	}
}

// A commit of the exports alone (RESULTS.md after make reproduce) keeps
// the label, so the report it committed stays cached; a commit of source
// moves it.
func TestCommitLabelSkipsExportCommits(t *testing.T) {
	dir := gitRepo(t)
	before := commitLabel(dir)
	commitAll := func(msg string) {
		for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", msg}} {
			if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	writeFile(t, filepath.Join(dir, "RESULTS.md"), "new results\n")
	writeFile(t, filepath.Join(dir, "results/ppl_ratio.png"), "new plot\n")
	commitAll("results")
	if got := commitLabel(dir); got != before {
		t.Fatalf("after committing exports only: label %q, want %q", got, before)
	}
	writeFile(t, filepath.Join(dir, "main.go"), "package main // edited\n")
	commitAll("source")
	if got := commitLabel(dir); got == before || strings.HasSuffix(got, "-dirty") {
		t.Fatalf("after committing source: label %q, want a new clean revision (was %q)", got, before)
	}
}

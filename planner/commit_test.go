package planner

import (
	"errors"
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

// label is commitLabel that fails the test on an error.
func label(t *testing.T, dir string) string {
	t.Helper()
	l, err := commitLabel(dir)
	if err != nil {
		t.Fatal(err)
	}
	return l
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
	clean := label(t, dir)
	if clean == "unknown" || strings.HasSuffix(clean, "-dirty") || len(clean) != 12 {
		t.Fatalf("fresh checkout: label %q, want a 12-digit revision", clean)
	}
	for _, name := range []string{"RESULTS.md", "results/ppl_ratio.png", "results/results.csv", "results/study-gap/a.png", "STUDY-gap.md", "STUDY-new.md"} {
		writeFile(t, filepath.Join(dir, name), "exported\n")
	}
	if got := label(t, dir); got != clean {
		t.Fatalf("after an export: label %q, want %q (the exports re-key the report)", got, clean)
	}
	if got := label(t, filepath.Join(dir, "docs")); got != clean {
		t.Fatalf("from a subdirectory: label %q, want %q", got, clean)
	}
	writeFile(t, filepath.Join(dir, "docs/x.md"), "edited\n")
	if got := label(t, dir); got != clean+"-dirty" {
		t.Fatalf("an edited tracked file: label %q, want %q", got, clean+"-dirty")
	}
	// Staged (index and work tree agree, HEAD differs): still dirty.
	if out, err := exec.Command("git", "-C", dir, "add", "docs/x.md").CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	if got := label(t, dir); got != clean+"-dirty" {
		t.Fatalf("a staged change: label %q, want %q", got, clean+"-dirty")
	}
	if got := label(t, t.TempDir()); got != "unknown" {
		t.Fatalf("outside a checkout: label %q, want unknown", got)
	}
}

// A commit of the exports alone (RESULTS.md after make reproduce) keeps
// the label, so the report it committed stays cached; a commit of source
// moves it.
func TestCommitLabelSkipsExportCommits(t *testing.T) {
	dir := gitRepo(t)
	before := label(t, dir)
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
	if got := label(t, dir); got != before {
		t.Fatalf("after committing exports only: label %q, want %q", got, before)
	}
	writeFile(t, filepath.Join(dir, "main.go"), "package main // edited\n")
	commitAll("source")
	if got := label(t, dir); got == before || strings.HasSuffix(got, "-dirty") {
		t.Fatalf("after committing source: label %q, want a new clean revision (was %q)", got, before)
	}
}

// A checkout another user owns (a lab's shared checkout, used by a member
// who does not own it): git refuses it, and the label is an error naming
// safe.directory, never "unknown" (which would give the report another
// key for every user). Once the caller trusts the checkout
// (safe.directory in their global config, as docs/cluster.md says), the
// label is the owner's, so every submitter gets one report key.
// Needs root, to give the checkout to another uid.
func TestCommitLabelCheckoutOfAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown a checkout to another user (make test-slurm case 11 runs it as a second user)")
	}
	dir := gitRepo(t)
	// The caller's git config: empty, as for a user who trusts nothing yet
	// (and no system file, which might trust every directory).
	global := filepath.Join(t.TempDir(), "gitconfig")
	writeFile(t, global, "")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	owner := label(t, dir)
	const other = 65534 // nobody
	err := filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, other, other)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := commitLabel(dir)
	if err == nil {
		t.Fatalf("a checkout uid %d owns: label %q and no error, want git's refusal named", other, got)
	}
	for _, want := range []string{"safe.directory", dir, "docs/cluster.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not name %q", err, want)
		}
	}
	if _, err := commitLabel(filepath.Join(dir, "docs")); err == nil {
		t.Errorf("from a subdirectory of the refused checkout: no error")
	}
	if out, err := exec.Command("git", "config", "--global", "--add", "safe.directory", dir).CombinedOutput(); err != nil {
		t.Fatalf("git config --global --add safe.directory: %v\n%s", err, out)
	}
	if got := label(t, dir); got != owner {
		t.Fatalf("trusted with safe.directory: label %q, want the owner's %q", got, owner)
	}
}

// The control: git's other failures keep their meaning (outside a
// checkout: "unknown", no error), so only the ownership refusal is an
// error.
func TestOwnershipRefusalOnlyForOwnership(t *testing.T) {
	if err := ownershipRefusal(".", &gitError{stderr: "fatal: not a git repository (or any of the parent directories): .git", err: errors.New("exit status 128")}); err != nil {
		t.Fatalf("not a repository: %v, want nil", err)
	}
	err := ownershipRefusal(".", &gitError{stderr: "fatal: detected dubious ownership in repository at '/shared/rb'\nTo add an exception for this directory, call:\n\n\tgit config --global --add safe.directory /shared/rb", err: errors.New("exit status 128")})
	if err == nil || !strings.Contains(err.Error(), "git config --global --add safe.directory /shared/rb") {
		t.Fatalf("git's refusal: %v, want the fix for /shared/rb", err)
	}
}

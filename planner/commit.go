package planner

import (
	"errors"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"routebench/stages/report"
	"routebench/stages/study"
)

// commit labels RESULTS.md with the checkout's revision: `git describe
// --always --abbrev=12`, suffixed -dirty when a tracked file other than
// the pipeline's own exports differs from HEAD; "unknown" outside a git
// checkout. It is part of the report's config, so the (cheap) report reruns
// when the revision changes.
//
// A checkout another user owns is refused by git ("dubious ownership":
// its repository config could run commands as you), and the label must not
// then fall back to "unknown": the report's key would depend on who runs
// it, and a lab sharing one checkout would compute and mislabel the report
// once per user. So that refusal is an error naming safe.directory, the
// trust each user grants the checkout once (docs/cluster.md). The label
// itself never depends on the caller: git reads one revision and one work
// tree whoever asks.
//
// Why not `git describe --dirty`: reproduce, results, sweep and slurm
// --wait export RESULTS.md, results/ and STUDY-<name>.md into the checkout,
// and the committed copies differ from a new run's (its date, its label),
// so the export itself made the checkout dirty and re-keyed the report: a
// second reproduce reran it and a gate after an export found no cached
// report. Those files are outputs, never inputs, so they do not make the
// source the label names any less the source that ran.
func commit() (string, error) { return commitLabel("") }

// exportedPathspecs exclude, from the top of the checkout, what the
// pipeline writes there: the report's markdown and its results/ folder
// (plots, tables, the studies' plots), and every study's markdown.
func exportedPathspecs() []string {
	return []string{
		":(top,exclude)" + report.ResultsFile,
		":(top,exclude)" + path.Dir(report.CSVFile),
		":(top,exclude)" + study.File("*"),
	}
}

// commitLabel is commit for the checkout holding dir ("" for the working
// directory).
//
// The revision is the newest commit that changed the source, not HEAD: a
// commit of the exports alone (RESULTS.md after make reproduce) changes no
// source, so it must not re-key the report it just committed.
func commitLabel(dir string) (string, error) {
	src, err := git(dir, append([]string{"log", "-1", "--format=%H", "--", ":(top)"}, exportedPathspecs()...)...)
	if refused := ownershipRefusal(dir, err); refused != nil {
		return "", refused
	}
	if err != nil || src == "" {
		src = "HEAD"
	}
	rev, err := git(dir, "describe", "--always", "--abbrev=12", src)
	if refused := ownershipRefusal(dir, err); refused != nil {
		return "", refused
	}
	if err != nil {
		return "unknown", nil
	}
	// --no-optional-locks: status must not write the index (slurm jobs
	// build the plan concurrently from one checkout). A status that fails
	// leaves the source unknown, so the label claims no clean tree.
	args := append([]string{"--no-optional-locks", "status", "--porcelain", "--untracked-files=no", "--", ":(top)"}, exportedPathspecs()...)
	changed, err := git(dir, args...)
	if refused := ownershipRefusal(dir, err); refused != nil {
		return "", refused
	}
	if err != nil || changed != "" {
		return rev + "-dirty", nil
	}
	return rev, nil
}

// ownershipRefusal turns git's refusal of a checkout another user owns
// into an error that says how to trust it; nil for any other outcome.
func ownershipRefusal(dir string, err error) error {
	var ge *gitError
	if !errors.As(err, &ge) || !(strings.Contains(ge.stderr, "dubious ownership") || strings.Contains(ge.stderr, "safe.directory")) {
		return nil
	}
	repo := dir
	if _, rest, ok := strings.Cut(ge.stderr, "repository at '"); ok {
		repo, _, _ = strings.Cut(rest, "'")
	}
	if abs, aerr := filepath.Abs(repo); aerr == nil {
		repo = abs
	}
	return fmt.Errorf("the report's commit label: git refuses the checkout %s because another user owns it (\"dubious ownership\"); "+
		"the label is part of the report's key, so it is not guessed: trust the checkout once with `git config --global --add safe.directory %s` "+
		"(docs/cluster.md, \"A checkout a lab shares\"): %w", repo, repo, err)
}

// gitError is a git command that failed, with what it wrote to stderr.
type gitError struct {
	args   []string
	stderr string
	err    error
}

func (e *gitError) Error() string {
	return fmt.Sprintf("git %s: %v: %s", strings.Join(e.args, " "), e.err, e.stderr)
}
func (e *gitError) Unwrap() error { return e.err }

// git runs a git command in dir and returns its trimmed output.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		ge := &gitError{args: args, err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.stderr = strings.TrimSpace(string(ee.Stderr))
		}
		return "", ge
	}
	return strings.TrimSpace(string(out)), nil
}

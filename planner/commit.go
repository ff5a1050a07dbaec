package planner

import (
	"os/exec"
	"path"
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
// Why not `git describe --dirty`: reproduce, results, sweep and slurm
// --wait export RESULTS.md, results/ and STUDY-<name>.md into the checkout,
// and the committed copies differ from a new run's (its date, its label),
// so the export itself made the checkout dirty and re-keyed the report: a
// second reproduce reran it and a gate after an export found no cached
// report. Those files are outputs, never inputs, so they do not make the
// source the label names any less the source that ran.
func commit() string { return commitLabel("") }

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
func commitLabel(dir string) string {
	src, err := git(dir, append([]string{"log", "-1", "--format=%H", "--", ":(top)"}, exportedPathspecs()...)...)
	if err != nil || src == "" {
		src = "HEAD"
	}
	rev, err := git(dir, "describe", "--always", "--abbrev=12", src)
	if err != nil {
		return "unknown"
	}
	// --no-optional-locks: status must not write the index (slurm jobs
	// build the plan concurrently from one checkout). A status that fails
	// leaves the source unknown, so the label claims no clean tree.
	args := append([]string{"--no-optional-locks", "status", "--porcelain", "--untracked-files=no", "--", ":(top)"}, exportedPathspecs()...)
	changed, err := git(dir, args...)
	if err != nil || changed != "" {
		return rev + "-dirty"
	}
	return rev
}

// git runs a git command in dir and returns its trimmed output.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

package slurm

import (
	"fmt"
	"sort"
	"strings"
)

// FailStageEnv names a stage whose job exits with status 3 before running
// it: a fault injected on purpose (the CI case "a train stage made to
// fail"), read by the job script at run time so that no stage's key or
// the job's name changes. sbatch passes the submitting shell's environment
// to the job, so setting it for one submission fails that submission only.
const FailStageEnv = "ROUTEBENCH_SLURM_FAIL_STAGE"

// ScriptSpec is what a job script needs.
type ScriptSpec struct {
	Stage, JobName string
	Dir            string   // working directory of the command
	Argv           []string // the command that runs the stage alone
	// Tasks make the script a job array's: each task runs the stage of
	// its index (SLURM_ARRAY_TASK_ID) alone, Stage and Argv are unused.
	Tasks      []ArrayTask
	MaxRequeue int      // requeues on the pre-limit signal
	Umask      string   // set before the stage runs, if not ""
	Setup      []string // the site's shell lines, run before the stage
}

// ArrayTask is one task of a job array: the stage its index runs.
type ArrayTask struct {
	Index int
	Stage string
	Argv  []string
	Log   string // where Slurm writes its output (for the script's header)
}

// scriptBroken breaks one piece of the job script for the mutation check
// of its test ("requeue-after-commit": requeue on the signal even when the
// stage had committed).
var scriptBroken string

// Script is the bash job script of one stage, or of a job array's stages
// (one per task index). Every value from outside (stage name, paths, --set
// values) is a single-quoted word, so nothing in them is expanded or run.
// The stage runs in the background and the script waits for it: bash runs
// a trap only between commands, so a foreground child would hold the
// pre-limit signal (USR1) until the stage ended. On the signal the stage
// is stopped (SIGTERM: the runner keeps the work dir, training resumes
// from its last checkpoint) and the job requeues itself, at most
// MaxRequeue times; past that the stage runs until the limit.
//
// The signal can come at any moment, so the trap is set first, before the
// site's setup: a signal before the stage starts stops it as soon as it
// starts, and the job requeues. A signal that lands after the stage
// committed its output must not requeue a finished stage: the stage's
// exit status 0 means its key is in the store (routebench exits 0 after
// the commit whatever signal came after), so then the job just ends.
func Script(sp ScriptSpec) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	sp.Tasks = append([]ArrayTask(nil), sp.Tasks...)
	sort.Slice(sp.Tasks, func(i, j int) bool { return sp.Tasks[i].Index < sp.Tasks[j].Index })
	w("#!/bin/bash")
	if len(sp.Tasks) == 0 {
		w("# routebench stage %s, job %s: written by `routebench slurm submit`", sanitizeComment(sp.Stage), sp.JobName)
	} else {
		w("# routebench job array %s, %d stages, one per task: written by `routebench slurm submit`", sp.JobName, len(sp.Tasks))
		for _, t := range sp.Tasks {
			w("#   task %d: %s (log %s)", t.Index, sanitizeComment(t.Stage), sanitizeComment(t.Log))
		}
	}
	w("set -u")
	w("max_requeue=%d", sp.MaxRequeue)
	w("requeue=0")
	w("child=")
	w("on_signal() {")
	w(`  echo "routebench-slurm: pre-limit signal in job ${SLURM_JOB_ID:-?} (restart ${SLURM_RESTART_COUNT:-0} of $max_requeue)" >&2`)
	w(`  if [ "${SLURM_RESTART_COUNT:-0}" -lt "$max_requeue" ]; then`)
	w("    requeue=1")
	w(`    [ -n "$child" ] && kill -TERM "$child" 2>/dev/null`)
	w("  fi")
	w("}")
	w("trap on_signal USR1")
	if len(sp.Tasks) == 0 {
		w("stage=%s", Quote(sp.Stage))
		w("set -- %s", QuoteArgv(sp.Argv))
	} else {
		w(`case "${SLURM_ARRAY_TASK_ID:-}" in`)
		for _, t := range sp.Tasks {
			w("%d) stage=%s", t.Index, Quote(t.Stage))
			w("   set -- %s ;;", QuoteArgv(t.Argv))
		}
		w(`*) echo "routebench-slurm: job array %s has no stage for task '${SLURM_ARRAY_TASK_ID:-}'" >&2`, sp.JobName)
		w("   exit 2 ;;")
		w("esac")
	}
	w("cd %s || { echo \"routebench-slurm: cannot enter the run directory\" >&2; exit 1; }", Quote(sp.Dir))
	w(`if [ "${%s:-}" = "$stage" ]; then`, FailStageEnv)
	w(`  echo "routebench-slurm: stage $stage failed on purpose (%s is set)" >&2`, FailStageEnv)
	w("  exit 3")
	w("fi")
	if sp.Umask != "" {
		w("umask %s", Quote(sp.Umask))
	}
	if len(sp.Setup) > 0 {
		w("# the site's setup (site file \"setup\")")
		for _, l := range sp.Setup {
			w("%s", sanitizeComment(l))
		}
	}
	w(`"$@" &`)
	w("child=$!")
	w("# a signal that came before the stage started could not stop it")
	w(`[ "$requeue" = 1 ] && kill -TERM "$child" 2>/dev/null`)
	w("while :; do")
	w(`  wait "$child"; rc=$?`)
	w(`  kill -0 "$child" 2>/dev/null || break # else wait was cut short by the trap`)
	w("done")
	if scriptBroken != "requeue-after-commit" {
		w(`if [ "$requeue" = 1 ] && [ "$rc" = 0 ]; then`)
		w(`  echo "routebench-slurm: stage $stage finished (its output is in the store) before the signal could stop it: not requeueing" >&2`)
		w("  requeue=0")
		w("fi")
	}
	w(`if [ "$requeue" = 1 ]; then`)
	w(`  echo "routebench-slurm: requeueing job $SLURM_JOB_ID; the stage resumes from its work dir" >&2`)
	w(`  scontrol requeue "$SLURM_JOB_ID" && exit 0`)
	w(`  echo "routebench-slurm: scontrol requeue failed" >&2`)
	w("fi")
	w(`exit "$rc"`)
	return b.String()
}

// sanitizeComment keeps a value on its comment line.
func sanitizeComment(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

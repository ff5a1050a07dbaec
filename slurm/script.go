package slurm

import (
	"fmt"
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
	MaxRequeue     int      // requeues on the pre-limit signal
	Umask          string   // set before the stage runs, if not ""
	Setup          []string // the site's shell lines, run before the stage
}

// Script is the bash job script of one stage. Every value from outside
// (stage name, paths, --set values) is a single-quoted word, so nothing in
// them is expanded or run. The stage runs in the background and the script
// waits for it: bash runs a trap only between commands, so a foreground
// child would hold the pre-limit signal (USR1) until the stage ended. On
// the signal the stage is stopped (SIGTERM: the runner keeps the work dir,
// training resumes from its last checkpoint) and the job requeues itself,
// at most MaxRequeue times; past that the stage runs until the limit.
func Script(sp ScriptSpec) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("#!/bin/bash")
	w("# routebench stage %s, job %s: written by `routebench slurm submit`", sanitizeComment(sp.Stage), sp.JobName)
	w("set -u")
	w("stage=%s", Quote(sp.Stage))
	w("max_requeue=%d", sp.MaxRequeue)
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
	w("%s &", QuoteArgv(sp.Argv))
	w("child=$!")
	w("while :; do")
	w(`  wait "$child"; rc=$?`)
	w(`  kill -0 "$child" 2>/dev/null || break # else wait was cut short by the trap`)
	w("done")
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

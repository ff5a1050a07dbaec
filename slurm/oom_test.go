package slurm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMemMiB(t *testing.T) {
	for in, want := range map[string]float64{"4G": 4096, "4000M": 4000, "4096": 4096, "1.5T": 1.5 * 1024 * 1024, "4Gn": 4096, "512Mc": 512, "2048K": 2} {
		if got, err := MemMiB(in); err != nil || got != want {
			t.Errorf("MemMiB(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "-1G"} {
		if _, err := MemMiB(bad); err == nil {
			t.Errorf("MemMiB(%q) accepted", bad)
		}
	}
}

// A job that ran out of memory (an array task here) is shown with its
// memory and the retry; a submit sends the stage alone with mem_retry,
// and its dependents after that job; a retry that runs out of memory
// too is not retried again.
func TestOutOfMemoryRetriedOnceWithMemRetry(t *testing.T) {
	f := newFakeSlurm(t)
	var sleeps []time.Duration
	s := newSubmitter(t, &sleeps)
	nodes := sweepPlan()
	for i := range nodes {
		nodes[i].Resources.MemRetry = "4G"
	}
	res, err := s.Submit(nodes)
	if err != nil {
		t.Fatal(err)
	}
	train := res.Arrays[0]
	tb := res.New["train/b"]
	f.write(t, "squeue.out", res.New["train/a"]+"|"+train.Name+"|COMPLETED|None|1G\n"+tb+"|"+train.Name+"|OUT_OF_MEMORY|OutOfMemory|1G\n")
	state := func() StageState {
		t.Helper()
		rep, err := s.Status(nodes, 3, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range rep.Stages {
			if st.Name == "train/b" {
				return st
			}
		}
		t.Fatal("no train/b in the report")
		return StageState{}
	}
	if st := state(); st.State != StateFailed || st.RetryMem != "4G" || !strings.Contains(st.Note, "out of memory at 1G") || !strings.Contains(st.Note, "mem_retry 4G") {
		t.Fatalf("train/b %+v: want failed, retried with 4G, the note saying so", st)
	}
	before := len(f.calls(t, "sbatch"))
	res2, err := s.Submit(nodes)
	if err != nil {
		t.Fatal(err)
	}
	var retry, evalB string
	for _, c := range f.calls(t, "sbatch")[before:] {
		if strings.Contains(c, "run train/b") || strings.Contains(c, "--comment=routebench train/b") || strings.Contains(c, "'--comment=routebench train/b") {
			retry = c
		}
	}
	for _, c := range f.calls(t, "sbatch")[before:] {
		if strings.Contains(sbatchArg(c, "--dependency"), res2.New["train/b"]) && !strings.Contains(c, "--comment=routebench report") {
			evalB = c
		}
	}
	if retry == "" || sbatchArg(retry, "--mem") != "4G" || sbatchArg(retry, "--array") != "" || res2.Retried["train/b"] != tb {
		t.Fatalf("retry call %q (retried %v): want train/b alone with --mem=4G", retry, res2.Retried)
	}
	if evalB == "" {
		t.Fatalf("no evaluate waits for train/b's retry job %s", res2.New["train/b"])
	}
	// The retry is newer than the array task: it is the stage's job now.
	f.write(t, "squeue.out", tb+"|"+train.Name+"|OUT_OF_MEMORY|OutOfMemory|1G\n"+res2.New["train/b"]+"|"+JobName(nodes[2].Recipe)+"|RUNNING|None|4G\n")
	if st := state(); st.State != StateRunning || st.JobID != res2.New["train/b"] || !strings.Contains(st.Note, "mem_retry") {
		t.Fatalf("train/b %+v: want the retry job running, marked as the mem_retry job", st)
	}
	f.write(t, "squeue.out", res2.New["train/b"]+"|"+JobName(nodes[2].Recipe)+"|OUT_OF_MEMORY|OutOfMemory|4G\n")
	if st := state(); st.State != StateFailed || st.RetryMem != "" || !strings.Contains(st.Note, "raise mem_retry") {
		t.Fatalf("train/b %+v: out of memory at mem_retry: want failed, no further retry, the advice", st)
	}
	// Without mem_retry a site gets the note and no retry.
	nodes[2].Resources.MemRetry = ""
	if st := state(); st.RetryMem != "" || !strings.Contains(st.Note, "sets no mem_retry") {
		t.Fatalf("train/b %+v without mem_retry", st)
	}
}

// The pre-limit signal and the stage's commit race: a signal before the
// stage has committed requeues the job (also one that came before the
// stage even started); one that lands after the commit does not requeue
// the finished stage.
func TestScriptSignalRace(t *testing.T) {
	for _, broken := range []string{"", "requeue-after-commit"} {
		scriptBroken = broken
		dir := t.TempDir()
		calls := filepath.Join(dir, "scontrol.calls")
		os.WriteFile(filepath.Join(dir, "scontrol"), []byte("#!/bin/bash\necho \"$@\" >> "+Quote(calls)+"\n"), 0o755)
		// The stage: "commits" (writes the marker) and exits 0 unless
		// stopped first; SIGTERM stops it with 143 as routebench does
		// before its commit.
		stage := filepath.Join(dir, "stage")
		os.WriteFile(stage, []byte(`#!/bin/bash
trap 'exit 143' TERM
if [ "$1" = late ]; then
	echo committed > "$2"
	trap 'exit 0' TERM # committed: routebench exits 0 whatever comes now
	kill -USR1 $PPID
	sleep 1 & wait
	exit 0
fi
sleep 2 & wait
echo committed > "$2"
`), 0o755)
		run := func(when string) (requeued, committed bool, rc int) {
			t.Helper()
			os.Remove(calls)
			marker := filepath.Join(dir, "marker-"+when)
			sp := ScriptSpec{Stage: "train/rope", JobName: "rb-x", Dir: dir, Argv: []string{stage, when, marker}, MaxRequeue: 3}
			if when == "early" {
				sp.Setup = []string{"kill -USR1 $$"} // before the stage starts
			}
			cmd := exec.Command("bash", "-c", Script(sp))
			cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "SLURM_JOB_ID=42", "SLURM_RESTART_COUNT=0", FailStageEnv+"=")
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); ok {
				rc = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("%s: %v: %s", when, err, out)
			}
			b, _ := os.ReadFile(calls)
			_, cerr := os.Stat(marker)
			return strings.Contains(string(b), "requeue 42"), cerr == nil, rc
		}
		requeued, committed, _ := run("early")
		if broken == "" && (!requeued || committed) {
			t.Fatalf("signal before the stage started: requeued %v, committed %v; want a requeue and the stage stopped", requeued, committed)
		}
		requeued, committed, rc := run("late")
		switch {
		case broken == "" && (requeued || !committed || rc != 0):
			t.Fatalf("signal after the commit: requeued %v, committed %v, exit %d; want no requeue, exit 0", requeued, committed, rc)
		case broken != "" && !requeued:
			t.Fatal("the broken script did not requeue a committed stage: the test cannot tell")
		}
	}
	scriptBroken = ""
}

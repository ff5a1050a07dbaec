package slurm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeSlurm puts sbatch, squeue, sacct and scancel scripts on PATH. Each
// appends its name and arguments to calls; squeue prints squeue.out,
// sacct prints sacct.out (or fails as a cluster without accounting when
// sacct.off exists); sbatch fails with "Socket timed out" while the
// counter in sbatch.fails is positive, then prints the next job id.
type fakeSlurm struct{ dir string }

func newFakeSlurm(t *testing.T) *fakeSlurm {
	t.Helper()
	dir := t.TempDir()
	scripts := map[string]string{
		"squeue": `cat "$D/squeue.out" 2>/dev/null; exit 0`,
		"sacct": `if [ -e "$D/sacct.off" ]; then echo "sacct: error: Slurm accounting storage is disabled" >&2; exit 1; fi
cat "$D/sacct.out" 2>/dev/null; exit 0`,
		"scancel": `exit 0`,
		"sbatch": `f=$(cat "$D/sbatch.fails" 2>/dev/null || echo 0)
if [ "$f" -gt 0 ]; then echo $((f-1)) > "$D/sbatch.fails"; echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation" >&2; exit 1; fi
if [ -e "$D/sbatch.refuse" ]; then echo "sbatch: error: Batch job submission failed: Invalid account" >&2; exit 1; fi
n=$(cat "$D/next" 2>/dev/null || echo 100); echo $((n+1)) > "$D/next"; echo "$n;cluster"`,
	}
	for name, body := range scripts {
		s := "#!/bin/bash\nD=" + Quote(dir) + "\necho \"" + name + " $*\" >> \"$D/calls\"\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return &fakeSlurm{dir: dir}
}

func (f *fakeSlurm) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// calls lists the commands run, one "name args" string each.
func (f *fakeSlurm) calls(t *testing.T, name string) []string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(f.dir, "calls"))
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(l, name+" ") || l == name {
			out = append(out, l)
		}
	}
	return out
}

// chain is a two-stage plan: train reads tokenize, evaluate reads train.
func chain(cached bool) []Node {
	r := func(c byte) string { return strings.Repeat(string(c), 64) }
	return []Node{
		{Name: "tokenize", Kind: "tokenize", Recipe: r('a'), Cached: cached, Argv: []string{"routebench", "run", "tokenize"}},
		{Name: "train/rope", Kind: "train", Recipe: r('b'), Parents: []string{"tokenize"}, Argv: []string{"routebench", "run", "train/rope"}},
		{Name: "evaluate/rope", Kind: "evaluate", Recipe: r('c'), Parents: []string{"train/rope"}, Argv: []string{"routebench", "run", "evaluate/rope"}},
	}
}

func newSubmitter(t *testing.T, sleeps *[]time.Duration) *Submitter {
	return &Submitter{Client: &Client{Backoff: time.Second, Sleep: func(d time.Duration) { *sleeps = append(*sleeps, d) }},
		Site: &Site{}, LogDir: t.TempDir(), Dir: "/work dir"}
}

func TestSbatchRetriesSocketTimeouts(t *testing.T) {
	f := newFakeSlurm(t)
	f.write(t, "sbatch.fails", "2")
	var sleeps []time.Duration
	s := newSubmitter(t, &sleeps)
	res, err := s.Submit(chain(true)[:2])
	if err != nil {
		t.Fatal(err)
	}
	if got := res.New["train/rope"]; got != "100" {
		t.Fatalf("train/rope job id %q, want 100 (the id after two time-outs)", got)
	}
	if n := len(f.calls(t, "sbatch")); n != 3 {
		t.Fatalf("%d sbatch calls, want 3 (two time-outs, one success)", n)
	}
	if len(sleeps) != 2 || sleeps[0] != time.Second || sleeps[1] != 2*time.Second {
		t.Fatalf("backoff %v, want [1s 2s]", sleeps)
	}
	if res.Cached != 1 || len(res.New) != 1 {
		t.Fatalf("cached %d, new %v: want tokenize cached and train/rope submitted", res.Cached, res.New)
	}
}

func TestSbatchGivesUpOnOtherErrors(t *testing.T) {
	f := newFakeSlurm(t)
	f.write(t, "sbatch.refuse", "")
	var sleeps []time.Duration
	_, err := newSubmitter(t, &sleeps).Submit(chain(true)[:2])
	if err == nil || !strings.Contains(err.Error(), "Invalid account") || !strings.Contains(err.Error(), "train/rope") {
		t.Fatalf("err = %v, want the refusal naming the stage", err)
	}
	if n := len(f.calls(t, "sbatch")); n != 1 || len(sleeps) != 0 {
		t.Fatalf("%d sbatch calls and %d sleeps for a permanent error, want 1 and 0", n, len(sleeps))
	}
}

func TestSubmitSkipsQueuedJobsAndChainsOnThem(t *testing.T) {
	f := newFakeSlurm(t)
	nodes := chain(true)
	// train/rope is already running from an earlier submission: one squeue
	// call finds it; evaluate/rope must wait for that job.
	f.write(t, "squeue.out", "77|"+JobName(nodes[1].Recipe)+"|RUNNING|None\n")
	var sleeps []time.Duration
	res, err := newSubmitter(t, &sleeps).Submit(nodes)
	if err != nil {
		t.Fatal(err)
	}
	if res.Queued["train/rope"] != "77" || len(res.New) != 1 {
		t.Fatalf("queued %v new %v: want train/rope found as job 77 and only evaluate/rope submitted", res.Queued, res.New)
	}
	sb := f.calls(t, "sbatch")
	if len(sb) != 1 || !strings.Contains(sb[0], "--dependency=afterok:77,singleton") || !strings.Contains(sb[0], "--kill-on-invalid-dep=yes") {
		t.Fatalf("sbatch calls %q: want evaluate/rope after job 77", sb)
	}
	if n := len(f.calls(t, "squeue")); n != 1 {
		t.Fatalf("%d squeue calls, want 1 for the whole plan", n)
	}
}

func TestStatusAccountingDisabledAndVanishedJob(t *testing.T) {
	f := newFakeSlurm(t)
	f.write(t, "sacct.off", "")
	// squeue knows nothing of train/rope's job (it vanished: older than
	// MinJobAge, or the controller lost its state) and accounting is off.
	var sleeps []time.Duration
	s := newSubmitter(t, &sleeps)
	rep, err := s.Status(chain(true)[:2], 5, false)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.NoAccounting {
		t.Fatal("NoAccounting not set although sacct said accounting is disabled")
	}
	if got := rep.Stages[1].State; got != StateNotSubmitted {
		t.Fatalf("train/rope state %q, want %q", got, StateNotSubmitted)
	}
	// A submission after it submits the vanished stage again.
	res, err := s.Submit(chain(true)[:2])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.New["train/rope"]; !ok {
		t.Fatalf("the vanished train/rope was not submitted again: %+v", res)
	}
}

func TestStatusFromAccounting(t *testing.T) {
	f := newFakeSlurm(t)
	nodes := chain(true)
	f.write(t, "sacct.out", "55|"+JobName(nodes[1].Recipe)+"|TIMEOUT\n")
	var sleeps []time.Duration
	rep, err := newSubmitter(t, &sleeps).Status(nodes[:2], 5, false)
	if err != nil {
		t.Fatal(err)
	}
	if st := rep.Stages[1]; st.State != StateFailed || st.JobID != "55" || rep.NoAccounting {
		t.Fatalf("train/rope %+v (no accounting %v): want failed as job 55 from sacct", st, rep.NoAccounting)
	}
}

func TestStatusCancelsJobsBehindAFailedParent(t *testing.T) {
	f := newFakeSlurm(t)
	nodes := chain(true)
	var sleeps []time.Duration
	s := newSubmitter(t, &sleeps)
	if err := os.WriteFile(LogPath(s.LogDir, nodes[1]), []byte("step 1\nstep 2\nout of memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write(t, "squeue.out", "10|"+JobName(nodes[1].Recipe)+"|FAILED|NonZeroExitCode\n"+
		"11|"+JobName(nodes[2].Recipe)+"|PENDING|DependencyNeverSatisfied\n")
	rep, err := s.Status(nodes, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	tr, ev := rep.Stages[1], rep.Stages[2]
	if tr.State != StateFailed || strings.Join(tr.Tail, "|") != "step 2|out of memory" {
		t.Fatalf("train/rope %+v: want failed with its log's last 2 lines", tr)
	}
	if ev.State != StateSkipped {
		t.Fatalf("evaluate/rope state %q, want skipped", ev.State)
	}
	if c := f.calls(t, "scancel"); len(c) != 1 || c[0] != "scancel 11" || strings.Join(rep.Cancelled, ",") != "11" {
		t.Fatalf("scancel calls %q, cancelled %v: want job 11 cancelled once", c, rep.Cancelled)
	}
}

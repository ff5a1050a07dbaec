package slurm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A site argument that sets a flag the executor relies on is refused with
// the flag named, before any sbatch call; a harmless one passes.
func TestManagedFlagsRefused(t *testing.T) {
	f := newFakeSlurm(t)
	for _, arg := range []string{"--dependency=afterany:1", "-J", "-Jname", "--output=/tmp/x", "--no-requeue", "--export=NONE", "--array=1-3"} {
		nodes := chain(true)
		nodes[1].Resources.Extra = []string{"--qos=normal", arg}
		var sleeps []time.Duration
		_, err := newSubmitter(t, &sleeps).Submit(nodes)
		want := ManagedFlag(arg)
		if want == "" || err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), arg) {
			t.Errorf("site arg %q: err = %v, want a refusal naming %q", arg, err, want)
		}
	}
	if n := len(f.calls(t, "sbatch")); n != 0 {
		t.Fatalf("%d sbatch calls despite a refused argument", n)
	}
	for _, ok := range []string{"--qos=normal", "--hold", "--constraint=avx2", "--mem-per-cpu=2G", "-p", "--exclusive"} {
		if m := ManagedFlag(ok); m != "" {
			t.Errorf("%q taken for the managed flag %s", ok, m)
		}
	}
}

// A % in the log path is escaped for sbatch's filename patterns; the job
// script is written by rename, not through a symlink at its name; the
// arguments state --export.
func TestSubmitEscapesLogsAndWritesScriptsAtomically(t *testing.T) {
	f := newFakeSlurm(t)
	var sleeps []time.Duration
	s := newSubmitter(t, &sleeps)
	s.LogDir = filepath.Join(t.TempDir(), "100%j logs")
	nodes := chain(true)[:2]
	script := filepath.Join(s.LogDir, filepath.Base(strings.TrimSuffix(LogPath(s.LogDir, nodes[1]), ".log"))+".sbatch")
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep me"), 0o644)
	os.MkdirAll(s.LogDir, 0o755)
	if err := os.Symlink(victim, script); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(nodes); err != nil {
		t.Fatal(err)
	}
	sb := f.calls(t, "sbatch")
	if len(sb) != 1 || !strings.Contains(sb[0], "--output="+strings.ReplaceAll(LogPath(s.LogDir, nodes[1]), "%", "%%")) || !strings.Contains(sb[0], "--export=ALL") {
		t.Fatalf("sbatch call %q: want the log path with %% escaped and --export=ALL", sb)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Fatal("the job script was written through a symlink at its name")
	}
	if st, err := os.Lstat(script); err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o100 == 0 {
		t.Fatalf("job script %s: %v %v, want a regular executable file", script, st.Mode(), err)
	}
}

func TestSubmitEnvDropsTheOuterJob(t *testing.T) {
	got := submitEnv([]string{"PATH=/bin", "SLURM_JOB_ID=7", "SLURM_CPUS_PER_TASK=4", "SLURM_CONF=/etc/slurm.conf", "ROUTEBENCH_STORE=/s"})
	if strings.Join(got, " ") != "PATH=/bin SLURM_CONF=/etc/slurm.conf ROUTEBENCH_STORE=/s" {
		t.Fatalf("submit env %v", got)
	}
}

// The site's setup lines and umask run before the stage; its wrapper goes
// before the command.
func TestScriptSetupUmaskAndWrap(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "seen")
	script := Script(ScriptSpec{Stage: "train/rope", Dir: dir, Umask: "0027",
		Setup: []string{"export RB_SETUP=loaded"},
		Argv:  []string{"env", "bash", "-c", `echo "$RB_SETUP $(umask)" > ` + Quote(out)}})
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), FailStageEnv+"=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s\n%s", err, b, script)
	}
	if b, _ := os.ReadFile(out); strings.TrimSpace(string(b)) != "loaded 0027" {
		t.Fatalf("the stage saw %q, want the setup's variable and the umask", b)
	}
	if (&Site{}).umask() != "0002" || (&Site{Umask: "keep"}).umask() != "" {
		t.Fatal("umask: 0002 by default, none with \"keep\"")
	}
}

// status is read-only: a job pending behind a failed stage is reported,
// not cancelled; its reason is shown, and a reason that does not clear
// marks it stuck.
func TestStatusReadOnlyWithReasons(t *testing.T) {
	f := newFakeSlurm(t)
	nodes := chain(false)
	f.write(t, "squeue.out", "9|"+JobName(nodes[0].Recipe)+"|PENDING|PartitionTimeLimit\n"+
		"10|"+JobName(nodes[1].Recipe)+"|FAILED|NonZeroExitCode\n"+
		"11|"+JobName(nodes[2].Recipe)+"|PENDING|DependencyNeverSatisfied\n")
	var sleeps []time.Duration
	rep, err := newSubmitter(t, &sleeps).Status(nodes, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if c := f.calls(t, "scancel"); len(c) != 0 || strings.Join(rep.Dead, ",") != "11" || len(rep.Cancelled) != 0 {
		t.Fatalf("scancel calls %q, dead %v, cancelled %v: want job 11 reported, nothing cancelled", c, rep.Dead, rep.Cancelled)
	}
	if tk := rep.Stages[0]; tk.State != StatePending || tk.Reason != "PartitionTimeLimit" || !tk.Stuck {
		t.Fatalf("tokenize %+v: want pending, its reason shown, stuck", tk)
	}
	f.write(t, "squeue.out", "9|"+JobName(nodes[0].Recipe)+"|PENDING|Priority\n")
	rep, _ = newSubmitter(t, &sleeps).Status(nodes, 2, false)
	if tk := rep.Stages[0]; tk.Reason != "Priority" || tk.Stuck {
		t.Fatalf("tokenize %+v: a Priority wait is not stuck", tk)
	}
}

// slurm cancel cancels the plan's active jobs in one scancel call.
func TestCancelPlan(t *testing.T) {
	f := newFakeSlurm(t)
	nodes := chain(false)
	f.write(t, "squeue.out", "20|"+JobName(nodes[0].Recipe)+"|COMPLETED|None\n"+
		"21|"+JobName(nodes[1].Recipe)+"|RUNNING|None\n"+
		"22|"+JobName(nodes[2].Recipe)+"|PENDING|Dependency\n")
	var sleeps []time.Duration
	ids, err := newSubmitter(t, &sleeps).CancelPlan(nodes)
	if err != nil {
		t.Fatal(err)
	}
	if c := f.calls(t, "scancel"); len(c) != 1 || c[0] != "scancel 21 22" || strings.Join(ids, ",") != "21,22" {
		t.Fatalf("scancel calls %q, ids %v: want one call for jobs 21 and 22", c, ids)
	}
	if q := f.calls(t, "squeue"); len(q) != 1 || !strings.Contains(q[0], "--me") {
		t.Fatalf("squeue calls %q: want one, for this user's jobs only (--me)", q)
	}
}

// --time is the estimate times the factor, between the floor and the cap,
// in whole minutes; a site's own time for the kind wins.
func TestTimeLimitFromEstimate(t *testing.T) {
	site := &Site{TimeFactor: 2, TimeFloor: "10m", TimeCap: "5h"}
	for _, tc := range []struct {
		est  time.Duration
		want string
	}{{time.Minute, "0:10:00"}, {40*time.Minute + time.Second, "1:21:00"}, {4 * time.Hour, "5:00:00"}} {
		if got, ok := site.TimeLimit("train", tc.est); !ok || got != tc.want {
			t.Errorf("estimate %s: --time %q (%v), want %q", tc.est, got, ok, tc.want)
		}
	}
	if got, ok := (&Site{}).TimeLimit("evaluate", 20*time.Hour); !ok || got != "48:00:00" {
		t.Errorf("defaults: 20h estimate gives %q, want the 48h cap", got)
	}
	if _, ok := (&Site{Kinds: map[string]Resources{"train": {Time: "12:00:00"}}}).TimeLimit("train", time.Hour); ok {
		t.Error("the site's own train time was overridden by the estimate")
	}
	if _, ok := site.TimeLimit("report", 0); ok {
		t.Error("an unpriced stage got an estimated time")
	}
}

// sbatch calls are paced SubmitInterval apart (on a fake clock that the
// pauses advance); a retry's backoff counts toward the interval.
func TestSubmitPacing(t *testing.T) {
	newFakeSlurm(t)
	clock := time.Unix(1e9, 0)
	var pauses []time.Duration
	c := &Client{SubmitInterval: time.Second, Now: func() time.Time { return clock },
		Sleep: func(d time.Duration) { pauses = append(pauses, d); clock = clock.Add(d) }}
	s := &Submitter{Client: c, Site: &Site{}, LogDir: t.TempDir(), Dir: "/w"}
	nodes := chain(false)
	clock = clock.Add(0)
	if _, err := s.Submit(nodes); err != nil {
		t.Fatal(err)
	}
	if len(pauses) != 2 || pauses[0] != time.Second || pauses[1] != time.Second {
		t.Fatalf("pauses %v: want 1s before the second and the third of three sbatch calls", pauses)
	}
	if d := (&Site{}).SubmitIntervalOrDefault(); d != 100*time.Millisecond {
		t.Fatalf("default submit interval %s", d)
	}
}

package slurm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sweepPlan: tokenize (cached), three trains, their evaluates in another
// order than the trains (so that an evaluate's task index must be looked
// up, not taken from its position), a second evaluate of train/a, and a
// report reading everything.
func sweepPlan() []Node {
	r := func(c byte) string { return strings.Repeat(string(c), 64) }
	n := func(name, kind string, rc byte, parents ...string) Node {
		return Node{Name: name, Kind: kind, Recipe: r(rc), Parents: parents, Argv: []string{"routebench", "run", name}, Resources: Resources{CPUs: 1, Mem: "1G", Time: "1:00:00"}}
	}
	tok := n("tokenize", "tokenize", '0')
	tok.Cached = true
	nodes := []Node{tok,
		n("train/a", "train", 'a', "tokenize"), n("train/b", "train", 'b', "tokenize"), n("train/c", "train", 'c', "tokenize"),
		n("evaluate/c", "evaluate", 'd', "train/c"), n("evaluate/a", "evaluate", 'e', "train/a"), n("evaluate/b", "evaluate", 'f', "train/b"),
		n("evaluate/a+x", "evaluate", '1', "train/a")}
	nodes[2].Resources.Time = "2:30:00" // the train array asks for its longest member's time
	var all []string
	for _, x := range nodes[1:] {
		all = append(all, x.Name)
	}
	return append(nodes, n("report", "report", '2', all...))
}

// sbatchArg is the value of flag in one logged sbatch call.
func sbatchArg(call, flag string) string {
	for _, w := range strings.Fields(call) {
		if v, ok := strings.CutPrefix(strings.Trim(w, "'"), flag+"="); ok {
			return v
		}
	}
	return ""
}

// Independent stages of one kind go in one job array, throttled by the
// site; an evaluate array whose members each read one train task lines up
// with the train array (aftercorr, each evaluate at its train's index); a
// member that does not line up waits on its own train task (afterok
// job_task); the report waits for whole arrays.
func TestSubmitJobArrays(t *testing.T) {
	for _, broken := range []string{"", "index"} {
		t.Run("broken="+broken, func(t *testing.T) {
			arrayBroken = broken
			defer func() { arrayBroken = "" }()
			f := newFakeSlurm(t)
			var sleeps []time.Duration
			s := newSubmitter(t, &sleeps)
			s.Site = &Site{ArrayThrottle: 2}
			res, err := s.Submit(sweepPlan())
			if err != nil {
				t.Fatal(err)
			}
			sb := f.calls(t, "sbatch")
			if len(sb) != 4 || len(res.Arrays) != 2 {
				t.Fatalf("%d sbatch calls, arrays %+v: want 4 (train array, evaluate array, evaluate/a+x, report)", len(sb), res.Arrays)
			}
			train, eval := res.Arrays[0], res.Arrays[1]
			if train.Spec != "0-2%2" || sbatchArg(sb[0], "--array") != "0-2%2" || sbatchArg(sb[0], "--time") != "2:30:00" {
				t.Fatalf("train array %+v, call %q: want --array=0-2%%2 and the longest time", train, sb[0])
			}
			if got := sbatchArg(sb[1], "--dependency"); got != "aftercorr:"+train.JobID+",singleton" {
				t.Fatalf("evaluate array dependency %q, want aftercorr on the train array %s", got, train.JobID)
			}
			// The reference: each evaluate's task index is its train's.
			aligned := true
			for _, st := range []string{"a", "b", "c"} {
				tr, ev := res.New["train/"+st], res.New["evaluate/"+st]
				if strings.SplitN(tr, "_", 2)[1] != strings.SplitN(ev, "_", 2)[1] {
					aligned = false
				}
			}
			if broken == "index" {
				if aligned {
					t.Fatal("broken indices still line up: the test cannot tell")
				}
				return
			}
			if !aligned {
				t.Fatalf("evaluate tasks %v do not sit at their trains' indices", res.New)
			}
			if got := sbatchArg(sb[2], "--dependency"); got != "afterok:"+res.New["train/a"]+",singleton" || sbatchArg(sb[2], "--array") != "" {
				t.Fatalf("evaluate/a+x: dependency %q in %q, want a job of its own after train/a's task %s", got, sb[2], res.New["train/a"])
			}
			if got := sbatchArg(sb[3], "--dependency"); got != "afterok:"+train.JobID+":"+eval.JobID+":"+res.New["evaluate/a+x"]+",singleton" {
				t.Fatalf("report dependency %q, want the two arrays whole and evaluate/a+x", got)
			}
			// Each task of the array's script runs its own stage only.
			script := filepath.Join(s.LogDir, eval.Name+".sbatch")
			body, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range []string{"a", "b", "c"} {
				ix := strings.SplitN(res.New["evaluate/"+st], "_", 2)[1]
				out := runTask(t, string(body), ix)
				if out != "run evaluate/"+st {
					t.Fatalf("task %s ran %q, want evaluate/%s", ix, out, st)
				}
			}
			if out := runTask(t, string(body), "7"); out != "" {
				t.Fatalf("task 7 (not in the array) ran %q", out)
			}
		})
	}
}

// runTask runs an array script as task ix with a fake routebench that
// prints its arguments, and returns them ("" when it did not run).
func runTask(t *testing.T, body, ix string) string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	fake := filepath.Join(dir, "routebench")
	os.WriteFile(fake, []byte("#!/bin/bash\necho \"$@\" > "+Quote(out)+"\n"), 0o755)
	body = strings.ReplaceAll(body, "set -- routebench ", "set -- "+Quote(fake)+" ")
	body = strings.ReplaceAll(body, "cd '/work dir'", "cd "+Quote(dir))
	cmd := exec.Command("bash", "-c", body)
	cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID="+ix, FailStageEnv+"=")
	err := cmd.Run()
	b, _ := os.ReadFile(out)
	if err != nil && len(b) > 0 {
		t.Fatalf("task %s: %v\n%s", ix, err, body)
	}
	return strings.TrimSpace(string(b))
}

// status finds each stage's array task (squeue -r lines), reads its log,
// and a second submit with the train tasks still running submits only the
// evaluates, lined up with the queued train array.
func TestStatusAndResubmitWithArrays(t *testing.T) {
	f := newFakeSlurm(t)
	var sleeps []time.Duration
	s := newSubmitter(t, &sleeps)
	nodes := sweepPlan()
	res, err := s.Submit(nodes)
	if err != nil {
		t.Fatal(err)
	}
	train := res.Arrays[0]
	ta, tb, tc := res.New["train/a"], res.New["train/b"], res.New["train/c"]
	os.WriteFile(ArrayLogPath(s.LogDir, train.Name, 1), []byte("step 9\nboom\n"), 0o644)
	// train/b failed; the others run; nothing else is known to Slurm.
	f.write(t, "squeue.out", ta+"|"+train.Name+"|RUNNING|None|1G\n"+tb+"|"+train.Name+"|FAILED|NonZeroExitCode|1G\n"+tc+"|"+train.Name+"|PENDING|Priority|1G\n")
	rep, err := s.Status(nodes, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]StageState{}
	for _, st := range rep.Stages {
		byName[st.Name] = st
	}
	if st := byName["train/b"]; st.State != StateFailed || st.JobID != tb || strings.Join(st.Tail, "|") != "boom" {
		t.Fatalf("train/b %+v: want failed as task %s with its task log's tail", st, tb)
	}
	if st := byName["train/a"]; st.State != StateRunning || st.JobID != ta {
		t.Fatalf("train/a %+v: want running as %s", st, ta)
	}
	before := len(f.calls(t, "sbatch"))
	res2, err := s.Submit(nodes)
	if err != nil {
		t.Fatal(err)
	}
	sb := f.calls(t, "sbatch")[before:]
	if res2.Queued["train/a"] != ta || res2.New["train/b"] == "" || len(sb) != 5 {
		t.Fatalf("resubmit: queued %v new %v, %d sbatch calls: want train/a and c left queued, train/b alone, the evaluates, report", res2.Queued, res2.New, len(sb))
	}
	// train/b is a job of its own now; evaluates a and c line up with the
	// queued train array, b waits on its new job.
	for _, c := range sb {
		if strings.Contains(c, "--array=") && strings.Contains(sbatchArg(c, "--dependency"), "aftercorr:"+train.JobID) {
			return
		}
	}
	t.Fatalf("no evaluate array lined up with the queued train array %s: %q", train.JobID, sb)
}

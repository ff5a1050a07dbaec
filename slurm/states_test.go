package slurm

import (
	"strings"
	"testing"
	"time"
)

// The records Slurm prints for job array tasks: split off, or one record
// for tasks that never started (pending, or cancelled before they ran).
func TestJobCoversTask(t *testing.T) {
	cases := []struct {
		id   string
		in   []int
		out  []int
		desc string
	}{
		{"123_4", []int{4}, []int{3, 5}, "a task"},
		{"123_[0-26]", []int{0, 13, 26}, []int{27}, "a range"},
		{"123_[0-26%4]", []int{0, 26}, []int{27}, "a throttled range"},
		{"123_[1,3,5-7]", []int{1, 3, 5, 6, 7}, []int{0, 2, 4, 8}, "a list"},
		{"123_[0-10:5]", []int{0, 5, 10}, []int{1, 4, 6}, "a step"},
		{"123", []int{0, 5, 123}, nil, "the whole array's record"},
		{"123_[x-y]", nil, []int{0}, "garbage"},
	}
	for _, c := range cases {
		j := Job{ID: c.id}
		for _, i := range c.in {
			if !j.CoversTask(i) {
				t.Errorf("%s (%s): task %d not covered", c.id, c.desc, i)
			}
		}
		for _, i := range c.out {
			if j.CoversTask(i) {
				t.Errorf("%s (%s): task %d covered", c.id, c.desc, i)
			}
		}
	}
}

// After `slurm cancel` of held job arrays, Slurm shows each array that
// never started as one CANCELLED record without a task index: its stages
// are cancelled, not not-submitted (the record was not found) nor failed
// (nothing failed). A job a user cancelled after it started is cancelled
// too; a job cancelled because its input failed stays skipped.
func TestStatusCancelledArrays(t *testing.T) {
	f := newFakeSlurm(t)
	var sleeps []time.Duration
	s := newSubmitter(t, &sleeps)
	nodes := sweepPlan()
	res, err := s.Submit(nodes)
	if err != nil {
		t.Fatal(err)
	}
	train, evals := res.Arrays[0], res.Arrays[1]
	var out strings.Builder
	// As Slurm 22.05 shows a held array cancelled before it started.
	out.WriteString(train.JobID + "|" + train.Name + "|CANCELLED|JobHeldUser|1G\n")
	out.WriteString(evals.JobID + "_1|" + evals.Name + "|CANCELLED|None|1G\n") // one task had started
	out.WriteString(evals.JobID + "_[0,2]|" + evals.Name + "|CANCELLED|None|1G\n")
	f.write(t, "squeue.out", out.String())
	rep, err := s.Status(nodes, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range rep.Stages {
		switch {
		case st.Name == "tokenize":
			if st.State != StateCached {
				t.Errorf("tokenize: %s", st.State)
			}
		case strings.HasPrefix(st.Name, "train/"), st.Name == "evaluate/a", st.Name == "evaluate/b", st.Name == "evaluate/c":
			if st.State != StateCancelled || !strings.HasPrefix(st.JobID, train.JobID) && !strings.HasPrefix(st.JobID, evals.JobID) {
				t.Errorf("%s: %s (job %s), want cancelled, its record found", st.Name, st.State, st.JobID)
			}
		}
	}
	// The control: a cancellation because an input failed is a skip.
	f.write(t, "squeue.out", train.JobID+"_[0-2]|"+train.Name+"|FAILED|NonZeroExitCode|1G\n"+evals.JobID+"_[0-2]|"+evals.Name+"|CANCELLED|DependencyNeverSatisfied|1G\n")
	if rep, err = s.Status(nodes, 1, false); err != nil {
		t.Fatal(err)
	}
	for _, st := range rep.Stages {
		want := map[string]string{"train/a": StateFailed, "evaluate/a": StateSkipped}[st.Name]
		if want != "" && st.State != want {
			t.Errorf("%s: %s, want %s", st.Name, st.State, want)
		}
	}
}

// A stage whose job completed but which the store misses is done-unseen
// (a shared file system's delay: wait) unless the store had it: then it
// is missing, and the note says to submit again. The control is the same
// job without Gone.
func TestStatusMissingOutput(t *testing.T) {
	f := newFakeSlurm(t)
	nodes := chain(true)
	f.write(t, "squeue.out", "70|"+JobName(nodes[1].Recipe)+"|COMPLETED|None|1G\n")
	var sleeps []time.Duration
	s := newSubmitter(t, &sleeps)
	for _, gone := range []string{"", "not in the store"} {
		nodes[1].Gone = gone
		rep, err := s.Status(nodes[:2], 1, false)
		if err != nil {
			t.Fatal(err)
		}
		st := rep.Stages[1]
		switch {
		case gone == "" && st.State != StateDone:
			t.Errorf("a completed job, its output not seen yet: %s, want %s", st.State, StateDone)
		case gone != "" && (st.State != StateMissing || !strings.Contains(st.Note, "submit again") || !strings.Contains(st.Note, gone)):
			t.Errorf("a completed job whose output the store lost: %s (%q), want %s with the fix", st.State, st.Note, StateMissing)
		}
	}
	// Gone with no job known (squeue forgot it): missing too; with an
	// active job (resubmitted): that job's state.
	f.write(t, "squeue.out", "")
	if rep, _ := s.Status(nodes[:2], 1, false); rep.Stages[1].State != StateMissing {
		t.Errorf("gone, no job known: %s, want missing", rep.Stages[1].State)
	}
	f.write(t, "squeue.out", "71|"+JobName(nodes[1].Recipe)+"|RUNNING|None|1G\n")
	if rep, _ := s.Status(nodes[:2], 1, false); rep.Stages[1].State != StateRunning {
		t.Errorf("gone, resubmitted: %s, want running", rep.Stages[1].State)
	}
}

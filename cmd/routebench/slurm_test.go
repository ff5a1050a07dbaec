package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"routebench/slurm"
)

// recipes builds the slurm job of a smoke plan with args and returns each
// stage's recipe by name.
func recipes(t *testing.T, args ...string) map[string]string {
	t.Helper()
	c, err := parseCommonWith("slurm submit", append([]string{"--profile", "smoke"}, args...), nil)
	if err != nil {
		t.Fatal(err)
	}
	j, err := newSlurmJob(c, &slurmFlags{}, "submit")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := j.nodes()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range nodes {
		out[n.Name] = n.Recipe
	}
	return out
}

// TestSlurmRecipes: a job name must be the same for two submissions of one
// plan, differ when a stage's key would (its config, an input's recipe,
// the store) and stay for stages a change does not reach.
func TestSlurmRecipes(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	a, b := recipes(t, "--store", store), recipes(t, "--store", store)
	if len(a) == 0 {
		t.Fatal("no stages")
	}
	for name, r := range a {
		if b[name] != r {
			t.Fatalf("stage %s: recipe %s then %s for one plan", name, r[:12], b[name][:12])
		}
	}
	steps := recipes(t, "--store", store, "--set", "steps=100")
	for _, tc := range []struct {
		stage string
		same  bool
	}{{"tokenize", true}, {"theory", true}, {"train/rope", false}, {"evaluate/rope", false}, {"report", false}} {
		if got := steps[tc.stage] == a[tc.stage]; got != tc.same {
			t.Errorf("--set steps=100: stage %s recipe unchanged = %v, want %v", tc.stage, got, tc.same)
		}
	}
	other := recipes(t, "--store", filepath.Join(t.TempDir(), "other"))
	if other["tokenize"] == a["tokenize"] {
		t.Error("two stores give tokenize one recipe: a submission to one would take the other's queued job for its own")
	}
}

// TestOnlyCancelled: --wait submits again only when nothing failed by itself.
func TestOnlyCancelled(t *testing.T) {
	st := func(state, job string) slurm.StageState { return slurm.StageState{State: state, JobState: job} }
	for _, tc := range []struct {
		name   string
		stages []slurm.StageState
		want   bool
	}{
		{"a requeued parent's dependent cancelled", []slurm.StageState{st(slurm.StateCached, ""), st(slurm.StateFailed, "CANCELLED"), st(slurm.StateSkipped, "PENDING")}, true},
		{"a train job failed", []slurm.StageState{st(slurm.StateFailed, "FAILED"), st(slurm.StateSkipped, "CANCELLED")}, false},
		{"a time-out", []slurm.StageState{st(slurm.StateFailed, "TIMEOUT")}, false},
		{"nothing unfinished", []slurm.StageState{st(slurm.StateCached, "")}, false},
		{"arrays cancelled before they started", []slurm.StageState{st(slurm.StateCancelled, "CANCELLED"), st(slurm.StateCancelled, "CANCELLED by 0")}, true},
	} {
		if got := onlyCancelled(&slurm.Report{Stages: tc.stages}); got != tc.want {
			t.Errorf("%s: onlyCancelled = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestWaitVerdict: --wait ends at once on a job that is not the planned
// stage or is stuck pending, and on a stage unseen past the limit; it goes
// on while a stage is unseen for less, or pending for a reason that clears.
func TestWaitVerdict(t *testing.T) {
	now := time.Unix(1e9, 0)
	rep := func(s slurm.StageState) *slurm.Report { return &slurm.Report{Stages: []slurm.StageState{s}} }
	mismatch := slurm.StageState{Name: "evaluate/rope", State: slurm.StateFailed, JobID: "5",
		Tail: []string{"routebench: stage evaluate/rope: this job would write key aa but the submitter planned key bb (" + plannedMarker + "): ..."}}
	if err := waitVerdict(rep(mismatch), map[string]time.Time{}, now, time.Minute); err == nil || !strings.Contains(err.Error(), "not the stage this submission planned") {
		t.Fatalf("key mismatch: %v, want --wait to end", err)
	}
	plainFail := mismatch
	plainFail.Tail = []string{"out of memory"}
	if err := waitVerdict(rep(plainFail), map[string]time.Time{}, now, time.Minute); err != nil {
		t.Fatalf("an ordinary failure is left to the usual end of --wait: %v", err)
	}
	stuck := slurm.StageState{Name: "train/rope", State: slurm.StatePending, JobID: "6", Reason: "PartitionTimeLimit", Stuck: true}
	if err := waitVerdict(rep(stuck), map[string]time.Time{}, now, time.Minute); err == nil || !strings.Contains(err.Error(), "PartitionTimeLimit") {
		t.Fatalf("stuck pending: %v, want the reason named", err)
	}
	unseen := slurm.StageState{Name: "train/rope", State: slurm.StateDone, JobID: "7", JobState: "COMPLETED"}
	seen := map[string]time.Time{}
	for _, dt := range []time.Duration{0, 30 * time.Second, time.Minute} {
		if err := waitVerdict(rep(unseen), seen, now.Add(dt), time.Minute); err != nil {
			t.Fatalf("unseen for %s of a 1m limit: %v", dt, err)
		}
	}
	if err := waitVerdict(rep(unseen), seen, now.Add(61*time.Second), time.Minute); err == nil || !strings.Contains(err.Error(), "COMPLETED") {
		t.Fatalf("unseen past the limit: %v, want the job's state named", err)
	}
	// An output the store had and lost: polling cannot bring it back.
	missing := slurm.StageState{Name: "train/rope", State: slurm.StateMissing, JobID: "8", JobState: "COMPLETED", Note: "its output was in the store and is not now (not in the store): submit again to compute it"}
	if err := waitVerdict(rep(missing), map[string]time.Time{}, now, time.Minute); err == nil || !strings.Contains(err.Error(), "submit again") {
		t.Fatalf("missing: %v, want --wait to end saying to submit again", err)
	}
}

// TestMemRetries: --wait submits a stage again with mem_retry once: a
// stage it has retried already is left to fail.
func TestMemRetries(t *testing.T) {
	rep := &slurm.Report{Stages: []slurm.StageState{
		{Name: "tokenize", State: slurm.StateFailed, RetryMem: "4G"},
		{Name: "train/rope", State: slurm.StateFailed},
		{Name: "train/alibi", State: slurm.StateFailed, RetryMem: "4G"},
	}}
	retried := map[string]bool{"train/alibi": true}
	got := memRetries(rep, retried)
	if len(got) != 1 || got[0].Name != "tokenize" {
		t.Fatalf("memRetries = %+v, want tokenize only (train/rope did not run out of memory, train/alibi was retried)", got)
	}
}

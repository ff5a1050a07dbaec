package slurm

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Stage states as `routebench slurm status` reports them.
const (
	StateCached       = "cached"        // in the store: the truth, whatever Slurm says
	StatePending      = "pending"       // queued
	StateRunning      = "running"       // running (or requeueing)
	StateFailed       = "failed"        // its job ended without the stage in the store
	StateSkipped      = "skipped"       // cancelled because a stage it reads failed
	StateDone         = "done-unseen"   // its job completed but the store does not show it (yet: NFS)
	StateMissing      = "missing"       // it was in the store (a run log says so) and is not now: submit again
	StateCancelled    = "cancelled"     // its job was cancelled (scancel, slurm cancel), not for a failed input
	StateNotSubmitted = "not-submitted" // no job of its name is known
)

// StageState is one node's state.
type StageState struct {
	Name, State, JobID, JobState, Log string
	// Reason is squeue's reason for a pending job (Priority, Resources,
	// Dependency, PartitionTimeLimit, ...).
	Reason string
	// Stuck: the job is pending for a reason that does not clear by
	// itself (see stuckReasons); it will never run as submitted.
	Stuck bool
	Tail  []string // last log lines of a failed stage
	// Note says more about the job: that it ran out of memory and is to
	// be retried with mem_retry, or that it is that retry.
	Note string
	// RetryMem is set when the stage's job ran out of memory below the
	// site's mem_retry: the memory to submit it again with.
	RetryMem string
}

// Report is the state of a whole plan.
type Report struct {
	Stages []StageState
	// NoAccounting is set when sacct said accounting is disabled: a job
	// squeue no longer shows (older than MinJobAge) is then unknown.
	NoAccounting bool
	Cancelled    []string // job ids cancelled as never runnable
	// Dead lists the jobs pending behind a failed stage that were left
	// alone (Status without cancelDead: `slurm status` is read-only).
	Dead []string
}

// Active counts the stages still pending or running.
func (r *Report) Count(state string) int {
	n := 0
	for _, s := range r.Stages {
		if s.State == state {
			n++
		}
	}
	return n
}

// stuckReasons are pending reasons that do not clear while the job waits:
// the job asks for more than its partition, account or QOS allows, or
// names something that does not exist. Fix the site file and submit again.
var stuckReasons = []string{"PartitionTimeLimit", "PartitionNodeLimit", "PartitionConfig", "BadConstraints",
	"InvalidAccount", "InvalidQOS", "QOSMaxWallDurationPerJobLimit", "AssocMaxWallDurationPerJobLimit",
	"QOSMaxCpuPerJobLimit", "QOSMaxMemoryPerJob", "AssocMaxCpuPerJobLimit"}

func stuck(reason string) bool {
	for _, r := range stuckReasons {
		if strings.Contains(reason, r) {
			return true
		}
	}
	return false
}

// Status reads each node's state: the store first (Node.Cached), then one
// squeue call for the rest, then one sacct call for any squeue does not
// know. A job pending forever behind a failed parent is reported skipped,
// as is every stage whose job was cancelled while a stage it reads had
// failed; with cancelDead such jobs are also cancelled (scancel), else
// they are listed in Report.Dead and nothing is changed.
func (s *Submitter) Status(nodes []Node, tailLines int, cancelDead bool) (*Report, error) {
	rep := &Report{}
	refs := s.arrayRefs(nodes)
	jobs, err := s.Client.Queue(jobNames(nodes, refs))
	if err != nil {
		return nil, fmt.Errorf("slurm status: %w", err)
	}
	var missing []Node
	for _, n := range nodes {
		if _, ok := findJob(n, refs[n.Name], jobs); !n.Cached && !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		acct, err := s.Client.Accounting(jobNames(missing, refs))
		switch {
		case errors.Is(err, ErrNoAccounting):
			rep.NoAccounting = true
		case err != nil:
			return nil, fmt.Errorf("slurm status: %w", err)
		}
		jobs = append(jobs, acct...)
	}
	failed := map[string]bool{}
	var dead []string
	for _, n := range nodes {
		j, known := findJob(n, refs[n.Name], jobs)
		st := StageState{Name: n.Name, Log: s.logOf(n, refs[n.Name], j, known)}
		if known {
			st.JobID, st.JobState = j.ID, j.State
		}
		parentFailed := false
		for _, p := range n.Parents {
			parentFailed = parentFailed || failed[p]
		}
		switch {
		case n.Cached:
			st.State = StateCached
		case n.Gone != "" && (!known || !j.Active()):
			// Not done-unseen: the store had this output (a run log
			// names its key done, and this host has seen that log), so
			// no NFS delay hides it; it was removed or damaged since.
			st.State = StateMissing
			st.Note = "its output was in the store and is not now (" + n.Gone + "): submit again to compute it"
		case !known:
			st.State = StateNotSubmitted
		case neverRuns(j):
			st.State = StateSkipped
			dead = append(dead, j.ID)
		case j.Active() && strings.HasPrefix(j.State, "PENDING"):
			st.State = StatePending
			st.Reason, st.Stuck = j.Reason, stuck(j.Reason)
		case j.Active():
			st.State = StateRunning
		case strings.HasPrefix(j.State, "COMPLETED"):
			st.State = StateDone
		case strings.HasPrefix(j.State, "CANCELLED") && (parentFailed || strings.Contains(j.Reason, "DependencyNeverSatisfied")):
			// Its own input failed, or (a job array's dependency is
			// shared by its tasks) a sibling's did.
			st.State = StateSkipped
		case strings.HasPrefix(j.State, "CANCELLED"):
			// Cancelled by a user (a task that never started is one
			// record of its array's, see Job.CoversTask): nothing failed.
			st.State = StateCancelled
		default:
			st.State = StateFailed
			st.Tail = tail(st.Log, tailLines)
		}
		memNote(&st, n.Resources, j)
		if st.State == StateFailed || st.State == StateSkipped {
			failed[n.Name] = true
		}
		rep.Stages = append(rep.Stages, st)
	}
	if len(dead) > 0 && !cancelDead {
		rep.Dead = dead
	}
	if len(dead) > 0 && cancelDead {
		if err := s.Client.Cancel(dead); err != nil {
			return rep, fmt.Errorf("slurm status: cancelling jobs pending behind a failed stage (%s): %w", strings.Join(dead, ","), err)
		}
		rep.Cancelled = dead
	}
	return rep, nil
}

// memNote says, for a failed job that ran out of memory, whether it is
// retried with the site's mem_retry (and sets RetryMem), and marks an
// active job that is that retry. A job ran at mem_retry when it asked for
// at least that much; one whose memory Slurm did not show counts as
// below it (--wait retries a stage once whatever it shows).
func memNote(st *StageState, r Resources, j Job) {
	asked, askedErr := MemMiB(j.Mem)
	retry, retryErr := MemMiB(r.MemRetry)
	atRetry := r.MemRetry != "" && retryErr == nil && askedErr == nil && j.Mem != "" && asked >= retry
	switch {
	case st.State == StateFailed && OutOfMemory(j.State) && r.MemRetry == "":
		st.Note = fmt.Sprintf("out of memory at %s; the site file sets no mem_retry for it (docs/cluster.md, section 5)", orQuestion(j.Mem))
	case st.State == StateFailed && OutOfMemory(j.State) && atRetry:
		st.Note = fmt.Sprintf("out of memory at %s, the site's mem_retry: raise mem_retry (or mem) in the site file and submit again", j.Mem)
	case st.State == StateFailed && OutOfMemory(j.State):
		st.RetryMem = r.MemRetry
		st.Note = fmt.Sprintf("out of memory at %s: submit (and --wait) retry it once with mem_retry %s", orQuestion(j.Mem), r.MemRetry)
	case (st.State == StatePending || st.State == StateRunning) && atRetry && r.MemRetry != r.Mem:
		st.Note = fmt.Sprintf("the mem_retry job (%s) after running out of memory", r.MemRetry)
	}
}

// tail is the last n lines of a file (nil if it cannot be read).
func tail(path string, n int) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return []string{fmt.Sprintf("(no log: %v)", err)}
	}
	lines := strings.Split(string(bytes.TrimRight(b, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// CancelPlan cancels this user's jobs of the nodes that may still run
// (pending, running, requeueing) in one scancel call and returns their ids.
func (s *Submitter) CancelPlan(nodes []Node) ([]string, error) {
	all := make([]Node, len(nodes))
	for i, n := range nodes {
		all[i] = n
		all[i].Cached = false // a cached stage's straggler is cancelled too
	}
	refs := s.arrayRefs(all)
	jobs, err := s.Client.Queue(jobNames(all, refs))
	if err != nil {
		return nil, fmt.Errorf("slurm cancel: listing this plan's jobs: %w", err)
	}
	var ids []string
	seen := map[string]bool{}
	for _, n := range all {
		for _, j := range jobs {
			mine := j.Name == JobName(n.Recipe)
			if r := refs[n.Name]; r.name != "" && j.Name == r.name {
				mine = j.CoversTask(r.index)
			}
			if mine && j.Active() && !seen[j.ID] {
				seen[j.ID] = true
				ids = append(ids, j.ID)
			}
		}
	}
	if err := s.Client.Cancel(ids); err != nil {
		return nil, fmt.Errorf("slurm cancel: %w", err)
	}
	return ids, nil
}

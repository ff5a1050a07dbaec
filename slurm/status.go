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
	var names []string
	for _, n := range nodes {
		if !n.Cached {
			names = append(names, JobName(n.Recipe))
		}
	}
	jobs, err := s.Client.Queue(names)
	if err != nil {
		return nil, fmt.Errorf("slurm status: %w", err)
	}
	latest := latestByName(jobs)
	var missing []string
	for _, name := range names {
		if _, ok := latest[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		acct, err := s.Client.Accounting(missing)
		switch {
		case errors.Is(err, ErrNoAccounting):
			rep.NoAccounting = true
		case err != nil:
			return nil, fmt.Errorf("slurm status: %w", err)
		}
		for n, j := range latestByName(acct) {
			latest[n] = j
		}
	}
	failed := map[string]bool{}
	var dead []string
	for _, n := range nodes {
		st := StageState{Name: n.Name, Log: LogPath(s.LogDir, n)}
		j, known := latest[JobName(n.Recipe)]
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
		case strings.HasPrefix(j.State, "CANCELLED") && parentFailed:
			st.State = StateSkipped
		default:
			st.State = StateFailed
			st.Tail = tail(st.Log, tailLines)
		}
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
	var names []string
	for _, n := range nodes {
		names = append(names, JobName(n.Recipe))
	}
	jobs, err := s.Client.Queue(names)
	if err != nil {
		return nil, fmt.Errorf("slurm cancel: listing this plan's jobs: %w", err)
	}
	var ids []string
	for _, j := range jobs {
		if j.Active() {
			ids = append(ids, j.ID)
		}
	}
	if err := s.Client.Cancel(ids); err != nil {
		return nil, fmt.Errorf("slurm cancel: %w", err)
	}
	return ids, nil
}

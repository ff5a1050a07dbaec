package slurm

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Client runs Slurm's commands. Transient controller errors ("Socket timed
// out", a busy or restarting slurmctld) are retried with a doubling
// backoff: a loaded controller answers them under bursts of calls.
type Client struct {
	Retries int           // extra attempts after a transient error (default 4)
	Backoff time.Duration // first wait (default 2s), doubled each retry
	Sleep   func(time.Duration)
	// Calls counts the commands run, by name (sbatch, squeue, ...).
	Calls map[string]int
	// SubmitInterval is the least time between two sbatch calls (the
	// site's submit_interval); Now is the clock (tests).
	SubmitInterval time.Duration
	Now            func() time.Time
	lastSubmit     time.Time
}

// pace waits until SubmitInterval has passed since the last sbatch call.
func (c *Client) pace() {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	sleep := c.Sleep
	if sleep == nil {
		sleep = time.Sleep
	}
	if !c.lastSubmit.IsZero() {
		if wait := c.SubmitInterval - now().Sub(c.lastSubmit); wait > 0 {
			sleep(wait)
		}
	}
	c.lastSubmit = now()
}

func (c *Client) count(name string) {
	if c.Calls == nil {
		c.Calls = map[string]int{}
	}
	c.Calls[name]++
}

var transient = []string{"Socket timed out", "Unable to contact slurm controller", "Resource temporarily unavailable", "Slurm temporarily unable to accept job"}

func isTransient(msg string) bool {
	for _, t := range transient {
		if strings.Contains(msg, t) {
			return true
		}
	}
	return false
}

// Run runs one Slurm command and returns its stdout; on failure the error
// names the command and carries its stderr.
func (c *Client) Run(name string, args ...string) (string, error) {
	if name == "sbatch" {
		c.pace()
	}
	retries, wait := c.Retries, c.Backoff
	if retries == 0 {
		retries = 4
	}
	if wait == 0 {
		wait = 2 * time.Second
	}
	sleep := c.Sleep
	if sleep == nil {
		sleep = time.Sleep
	}
	for attempt := 0; ; attempt++ {
		c.count(name)
		var out, errb bytes.Buffer
		cmd := exec.Command(name, args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if name == "sbatch" {
			cmd.Env = submitEnv(os.Environ())
		}
		err := cmd.Run()
		if err == nil {
			return out.String(), nil
		}
		msg := strings.TrimSpace(errb.String())
		if attempt < retries && isTransient(msg) {
			sleep(wait)
			wait *= 2
			continue
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), &CommandError{Name: name, Args: args, Stderr: msg, Err: err}
		}
		return "", fmt.Errorf("running %s: %w (is Slurm installed and on PATH?)", name, err)
	}
}

// submitEnv is the environment sbatch runs with, and (with --export=ALL)
// the jobs get: the submitter's, less the SLURM_* variables of a job it
// may itself run in (a submit from inside an allocation would otherwise
// hand its job id, CPU count and node list to every job), but SLURM_CONF,
// which says which cluster to talk to.
func submitEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "SLURM_") && !strings.HasPrefix(kv, "SLURM_CONF=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// CommandError is a Slurm command that ran and failed.
type CommandError struct {
	Name   string
	Args   []string
	Stderr string
	Err    error
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("%s %s: %v: %s", e.Name, QuoteArgv(e.Args), e.Err, e.Stderr)
}
func (e *CommandError) Unwrap() error { return e.Err }

// Job is one line of squeue or sacct. An array task's ID is
// "<array job id>_<task index>" (squeue -r, sacct).
type Job struct {
	ID, Name, State, Reason string
	// Mem is the memory the job asked for as Slurm prints it (squeue %m,
	// sacct ReqMem: "4G", "4000M", "4Gn"), "" where not shown.
	Mem string
}

// ArrayTask splits an array task's ID into the array's job id and the
// task index; ok is false for a job that is not an array task.
func (j Job) ArrayTask() (array string, task int, ok bool) {
	a, t, found := strings.Cut(j.ID, "_")
	if !found {
		return "", 0, false
	}
	n, err := strconv.Atoi(t)
	if err != nil { // "123_[4-7%2]": tasks not yet split off (no -r)
		return "", 0, false
	}
	return a, n, true
}

// CoversTask says whether the record j, a line of a job array (a line of
// the array's name), stands for its task i: a task split off ("123_4"), a
// record of tasks that never started ("123_[0-26%4]", "123_[3,5-7]"), or
// the record of a whole array none of whose tasks ever had a line of its
// own ("123"). Slurm shows a pending array's tasks as such a record until
// they start (squeue -r splits them), and keeps it after a scancel: Slurm
// 22.05 shows a held array cancelled before it started as one line, the
// array's bare job id, CANCELLED.
func (j Job) CoversTask(i int) bool {
	if _, t, ok := j.ArrayTask(); ok {
		return t == i
	}
	if !strings.Contains(j.ID, "_") {
		return true
	}
	_, spec, found := strings.Cut(j.ID, "_[")
	if !found || !strings.HasSuffix(spec, "]") {
		return false
	}
	spec, _, _ = strings.Cut(strings.TrimSuffix(spec, "]"), "%")
	for _, part := range strings.Split(spec, ",") {
		rng, step, hasStep := strings.Cut(part, ":")
		lo, hi, isRange := strings.Cut(rng, "-")
		if !isRange {
			hi = lo
		}
		l, err1 := strconv.Atoi(lo)
		h, err2 := strconv.Atoi(hi)
		st := 1
		if hasStep {
			n, err := strconv.Atoi(step)
			if err != nil || n < 1 {
				continue
			}
			st = n
		}
		if err1 == nil && err2 == nil && i >= l && i <= h && (i-l)%st == 0 {
			return true
		}
	}
	return false
}

// Active says whether the job may still run (and so may still produce its
// stage): pending, running or about to be requeued.
func (j Job) Active() bool {
	switch strings.Fields(j.State + " ")[0] {
	case "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESIZING", "SUSPENDED", "SIGNALING", "STAGE_OUT", "RESV_DEL_HOLD":
		return true
	}
	return false
}

// Queue lists this user's jobs with the given names in every state
// (squeue -t all: without it failed and finished jobs are left out) in one
// squeue call, one line per array task (-r: a pending array is otherwise
// one line for all its tasks). Only this user's (--me): on a store several users share,
// user B must neither chain on nor cancel user A's jobs (nor could B
// cancel them), and with PrivateData=jobs B does not see them anyway.
// Two users submitting one plan each compute a key then; the store keeps
// the first commit (artifacts.PutOnce).
func (c *Client) Queue(names []string) ([]Job, error) {
	if len(names) == 0 {
		return nil, nil
	}
	out, err := c.Run("squeue", "-h", "--me", "--states=all", "-r", "--name="+strings.Join(names, ","), "-o", "%i|%j|%T|%r|%m")
	if err != nil {
		return nil, err
	}
	return parseJobs(out, true), nil
}

// ErrNoAccounting is sacct's answer on a cluster without accounting
// storage: finished jobs are then known only while squeue shows them
// (MinJobAge).
var ErrNoAccounting = errors.New("Slurm accounting storage is disabled")

// Accounting lists the jobs with the given names from sacct (the last 30
// days), for jobs squeue has forgotten.
func (c *Client) Accounting(names []string) ([]Job, error) {
	if len(names) == 0 {
		return nil, nil
	}
	out, err := c.Run("sacct", "-n", "-P", "-X", "--starttime=now-30days", "--name="+strings.Join(names, ","), "-o", "JobID,JobName,State,ReqMem")
	// sacct shows only the caller's jobs unless asked for --allusers.
	if err != nil {
		var ce *CommandError
		if errors.As(err, &ce) && strings.Contains(strings.ToLower(ce.Stderr), "accounting storage is disabled") {
			return nil, ErrNoAccounting
		}
		return nil, err
	}
	if strings.Contains(strings.ToLower(out), "accounting storage is disabled") {
		return nil, ErrNoAccounting
	}
	return parseJobs(out, false), nil
}

// parseJobs reads "id|name|state|reason|mem" lines (squeue) or
// "id|name|state|mem" lines (sacct, withReason false); the fields after
// the state may be missing.
func parseJobs(out string, withReason bool) []Job {
	var jobs []Job
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) < 3 || f[0] == "" {
			continue
		}
		j := Job{ID: f[0], Name: f[1], State: f[2]}
		rest := f[3:]
		if withReason && len(rest) > 0 {
			j.Reason, rest = rest[0], rest[1:]
		}
		if len(rest) > 0 {
			j.Mem = rest[0]
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// Cancel cancels jobs by id (one scancel call).
func (c *Client) Cancel(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := c.Run("scancel", ids...)
	return err
}

// Sbatch submits a job script with the given flags (--parsable added) and
// returns the job id.
func (c *Client) Sbatch(args []string, script string) (string, error) {
	out, err := c.Run("sbatch", append(append([]string{"--parsable"}, args...), script)...)
	if err != nil {
		return "", err
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";") // --parsable: id[;cluster]
	if id == "" {
		return "", fmt.Errorf("sbatch %s: no job id in its output %q", script, out)
	}
	return id, nil
}

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"routebench/artifacts"
	"routebench/pipeline"
	"routebench/planner/cost"
	"routebench/slurm"
	"routebench/stages/study"
)

const slurmUsage = `usage: routebench slurm submit|status|cancel [flags]

  submit     a job per stage not in the store, independent stages of one kind
             in one job array (aftercorr or afterok on the jobs of its inputs;
             the report, or a sweep's study, last); stages cached, queued or
             running are not submitted again; a job that ran out of memory is
             submitted again with the site's mem_retry
  status     each stage's state: the store, then squeue (sacct where there is
             accounting); failed stages with the end of their log, pending
             ones with Slurm's reason; read-only: jobs left pending behind a
             failed stage are shown skipped, and cancelled with --cancel-dead
  cancel     scancel this user's pending and running jobs of the plan

flags (besides run's --profile, --config, --set, --corpus, --eval-corpus, --sweep,
--store, --backend, --out):
  --site FILE         site defaults (JSON: resources per stage kind, binaries; docs/cluster.md)
  --partition P, --account A, --sbatch-arg ARG (repeatable): for every job, over the site file
  --log-dir DIR       job scripts and logs (default <store>/../slurm)
  --dry-run           submit: print the sbatch lines and job scripts, submit nothing
  --wait              submit: poll until the plan is done, then export RESULTS.md or
                      STUDY-<name>.md as reproduce or sweep would
  --poll D, --poll-max D   first and longest interval between polls (default 5s, 60s)
  --unseen-limit D    --wait: fail when a stage's job completed but its output stays
                      out of the store this long (default 5m; NFS needs seconds)
  --outage D          --wait: keep polling through squeue/sacct failures this long (default 10m)
  --cancel-dead       status: cancel the jobs pending behind a failed stage
`

// slurmFlags are the slurm command's own flags.
type slurmFlags struct {
	site, partition, account, logDir string
	sbatchArgs                       multiFlag
	dryRun, wait, cancelDead         bool
	poll, pollMax, unseenLimit       time.Duration
	outage                           time.Duration
}

func cmdSlurm(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "submit" && args[0] != "status" && args[0] != "cancel") {
		fmt.Fprint(os.Stderr, slurmUsage)
		return fmt.Errorf("slurm needs submit, status or cancel: %w", errUsage)
	}
	sub := args[0]
	var f slurmFlags
	c, err := parseCommonWith("slurm "+sub, args[1:], func(fs *flag.FlagSet) {
		fs.StringVar(&f.site, "site", "", "site file")
		fs.StringVar(&f.partition, "partition", "", "partition")
		fs.StringVar(&f.account, "account", "", "account")
		fs.Var(&f.sbatchArgs, "sbatch-arg", "extra sbatch argument")
		fs.StringVar(&f.logDir, "log-dir", "", "log directory")
		fs.BoolVar(&f.dryRun, "dry-run", false, "print sbatch lines")
		fs.BoolVar(&f.wait, "wait", false, "wait and export")
		fs.DurationVar(&f.poll, "poll", 5*time.Second, "first poll interval")
		fs.DurationVar(&f.pollMax, "poll-max", 60*time.Second, "longest poll interval")
		fs.DurationVar(&f.unseenLimit, "unseen-limit", 5*time.Minute, "how long a completed stage may stay unseen")
		fs.DurationVar(&f.outage, "outage", 10*time.Minute, "how long --wait polls through Slurm failures")
		fs.BoolVar(&f.cancelDead, "cancel-dead", false, "status: cancel jobs behind a failed stage")
	})
	if err != nil {
		return err
	}
	if len(c.args) > 0 {
		return fmt.Errorf("slurm %s takes no stage names (got %v): it submits the whole plan: %w", sub, c.args, errUsage)
	}
	if len(c.force) > 0 {
		return fmt.Errorf("slurm %s: --force is not supported (a job per forced stage would recompute inputs it shares); run `routebench run --force` on a node instead", sub)
	}
	job, err := newSlurmJob(c, &f, sub)
	if err != nil {
		return err
	}
	switch sub {
	case "status":
		rep, err := job.status(f.cancelDead)
		if err != nil {
			return err
		}
		printSlurmReport(job, rep)
		return nil
	case "cancel":
		nodes, err := job.nodes()
		if err != nil {
			return err
		}
		ids, err := job.sub.CancelPlan(nodes)
		if err != nil {
			return err
		}
		fmt.Printf("slurm cancel %s: %d jobs cancelled %s\n", job.plan.Profile, len(ids), strings.Join(ids, " "))
		return nil
	}
	return job.submit(ctx)
}

// slurmJob is one submission: the plan, the store and the submitter.
type slurmJob struct {
	c      *common
	f      *slurmFlags
	runner *pipeline.Runner
	plan   *pipeline.Plan
	sub    *slurm.Submitter
	gpu    bool
}

func newSlurmJob(c *common, f *slurmFlags, sub string) (*slurmJob, error) {
	// Only a submission that submits writes the store (its log dir
	// beside it, and its jobs); status, cancel and a dry run read it.
	setup := c.setupReadOnly
	if sub == "submit" && !f.dryRun {
		setup = c.setup
	}
	r, plan, err := setup()
	if err != nil {
		return nil, err
	}
	r.Log = os.Stderr
	var site *slurm.Site
	if f.site != "" {
		if site, err = slurm.LoadSite(f.site); err != nil {
			return nil, err
		}
	} else {
		site = &slurm.Site{}
	}
	site.Default.Partition = firstNonEmpty(f.partition, site.Default.Partition)
	site.Default.Account = firstNonEmpty(f.account, site.Default.Account)
	site.Default.Extra = append(site.Default.Extra, f.sbatchArgs...)
	dir, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("slurm: the working directory, where the jobs run: %w", err)
	}
	store, err := filepath.Abs(r.Store.Root())
	if err != nil {
		return nil, err
	}
	logDir := f.logDir
	if logDir == "" {
		logDir = filepath.Join(filepath.Dir(store), "slurm")
	}
	if logDir, err = filepath.Abs(logDir); err != nil {
		return nil, err
	}
	j := &slurmJob{c: c, f: f, runner: r, plan: plan, gpu: c.sweep == "" && c.profile == "paper",
		sub: &slurm.Submitter{Client: &slurm.Client{SubmitInterval: site.SubmitIntervalOrDefault()}, Site: site, LogDir: logDir, Dir: dir, DryRun: f.dryRun, Out: os.Stdout,
			Mkdir: r.Store.MkdirAll}}
	return j, nil
}

// estimator prices a stage on a job's CPUs with the cost model `plan`
// uses, calibrated by the store's cached runs (planner/cost.Fit scales a
// record made on another core count). An unpriced stage is 0.
func (j *slurmJob) estimator(done map[string]*artifacts.Artifact) func(s *pipeline.Stage, cpus int) time.Duration {
	var recs []cost.Record
	for _, s := range j.plan.Stages {
		if ri, ok := runInfoOf(done[s.Name]); ok {
			recs = append(recs, cost.Record{Stage: s, Run: ri})
		}
	}
	cals := map[int]cost.Calibration{}
	return func(s *pipeline.Stage, cpus int) time.Duration {
		cpus = max(cpus, 1)
		cal, ok := cals[cpus]
		if !ok {
			cal = cost.Fit(recs, cpus)
			cals[cpus] = cal
		}
		return time.Duration(cal.Stage(s).Seconds * float64(time.Second))
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// nodes describes the plan for the scheduler: the store's state now and
// each stage's recipe.
func (j *slurmJob) nodes() ([]slurm.Node, error) {
	nodes, _, err := j.nodesAndDone()
	return nodes, err
}

// nodesAndDone is nodes and what the store holds of the plan now.
func (j *slurmJob) nodesAndDone() ([]slurm.Node, map[string]*artifacts.Artifact, error) {
	lines, done, err := j.runner.Status(j.plan)
	if err != nil {
		return nil, nil, err
	}
	nodes, err := j.nodesFrom(lines, done)
	return nodes, done, err
}

func (j *slurmJob) nodesFrom(lines []pipeline.StatusLine, done map[string]*artifacts.Artifact) ([]slurm.Node, error) {
	estimate := j.estimator(done)
	store, _ := filepath.Abs(j.runner.Store.Root())
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("slurm: the routebench binary the jobs run: %w", err)
	}
	recipe := map[string]string{}
	var nodes []slurm.Node
	for i, s := range j.plan.Stages {
		rc, err := stageRecipe(s, recipe, store)
		if err != nil {
			return nil, err
		}
		recipe[s.Name] = rc
		n := slurm.Node{Name: s.Name, Kind: s.Kind, Recipe: rc, Cached: lines[i].Cached,
			Argv: j.c.runArgv(s.Name, store), Resources: j.sub.Site.For(s.Kind, j.gpu)}
		if t, ok := j.sub.Site.TimeLimit(s.Kind, estimate(s, n.Resources.CPUs)); ok {
			n.Resources.Time = t
		}
		n.Argv[0] = bin
		// The job runs its stage only (never its inputs), and only if it
		// is the stage planned here (see runOnly).
		n.Argv = append(n.Argv, "--only", "--input-wait", j.sub.Site.InputWait().String(), "--expect-recipe", rc)
		if k := lines[i].Key; k != "" {
			n.Argv = append(n.Argv, "--expect-key", k)
		}
		if b := j.sub.Site.Binary[s.Kind]; b != "" {
			n.Argv[0] = b
		}
		for _, in := range s.Inputs {
			n.Parents = append(n.Parents, in.Stage.Name)
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// stageRecipe hashes what ComputeKey hashes but with each input's recipe
// for its output digest, plus the store: known before any input has run,
// the same for two submissions of one plan to one store, and different
// whenever the key would differ for a reason known before the run.
func stageRecipe(s *pipeline.Stage, recipe map[string]string, store string) (string, error) {
	cfg, err := pipeline.CanonicalConfig(s.Config)
	if err != nil {
		return "", fmt.Errorf("stage %s: config: %w", s.Name, err)
	}
	salt, _, err := pipeline.CodeSalt(s.Code)
	if err != nil {
		return "", fmt.Errorf("stage %s: %w", s.Name, err)
	}
	name := s.Name
	if s.KeyName != "" {
		name = s.KeyName
	}
	lines := []string{"slurm-recipe-v1", "format " + artifacts.FormatVersion, "store " + store, "stage " + name, "kind " + s.Kind, "config " + string(cfg), "code " + salt}
	var ins []string
	for _, in := range s.Inputs {
		ins = append(ins, "input "+in.Name+" "+recipe[in.Stage.Name])
	}
	sort.Strings(ins)
	sum := sha256.Sum256([]byte(strings.Join(append(lines, ins...), "\n")))
	return hex.EncodeToString(sum[:]), nil
}

func (j *slurmJob) submit(ctx context.Context) error {
	nodes, err := j.nodes()
	if err != nil {
		return err
	}
	res, err := j.sub.Submit(nodes)
	if err != nil {
		return err
	}
	verb := "submitted"
	if j.f.dryRun {
		verb = "would be submitted (--dry-run)"
	}
	for _, a := range res.Arrays {
		fmt.Fprintf(os.Stderr, "slurm submit %s: job array of %d %s stages (--array=%s): %s\n", j.plan.Profile, len(a.Stages), kindOf(j.plan, a.Stages[0]), a.Spec, strings.Join(a.Stages, " "))
	}
	jobs := len(res.New)
	for _, a := range res.Arrays {
		jobs -= len(a.Stages) - 1
	}
	fmt.Fprintf(os.Stderr, "slurm submit %s: %d stages, %d cached, %d already queued or running, %d %s as %d jobs, %d of them job arrays (sbatch calls: %d, squeue calls: %d)\n",
		j.plan.Profile, len(nodes), res.Cached, len(res.Queued), len(res.New), verb, jobs, len(res.Arrays), j.sub.Client.Calls["sbatch"], j.sub.Client.Calls["squeue"])
	if !j.f.wait || j.f.dryRun {
		return nil
	}
	return j.waitAndExport(ctx)
}

// waitAndExport polls (one squeue per interval for the whole plan, the
// interval growing by half up to --poll-max) until the last stage is in
// the store, then exports as reproduce or sweep does. A poll reads the
// store through a pipeline.Watch: the run logs jobs rewrote since the last
// poll, and a stage's blobs once when it first shows, never the whole
// plan's again. A stage whose job ran out of memory is submitted again
// with the site's mem_retry, once per stage.
func (j *slurmJob) waitAndExport(ctx context.Context) error {
	interval := j.f.poll
	resubmits := 0
	memRetried := map[string]bool{}
	last := j.plan.Stages[len(j.plan.Stages)-1].Name
	var failingSince time.Time
	unseenSince := map[string]time.Time{}
	pause := func() error {
		select {
		case <-ctx.Done():
			return fmt.Errorf("slurm: stopped waiting (the jobs keep running; `routebench slurm status` shows them): %w", ctx.Err())
		case <-time.After(interval):
		}
		interval = min(interval*3/2, j.f.pollMax)
		return nil
	}
	nodes, watch, err := j.startWatch()
	if err != nil {
		return err
	}
	ended := map[string]bool{} // stages whose job ended at the last poll
	for {
		rep, err := j.poll(nodes, watch, ended)
		var ce *slurm.CommandError
		if err != nil && !errors.As(err, &ce) {
			return err // the plan or the store, not Slurm: polling again cannot help
		}
		if err != nil {
			// A controller restart or an overloaded slurmctld (the client
			// has retried already): keep polling through --outage.
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if time.Since(failingSince) > j.f.outage {
				return fmt.Errorf("slurm: gave up waiting after %s of failing polls (the jobs keep running; `routebench slurm status` shows them): %w", j.f.outage, err)
			}
			fmt.Fprintf(os.Stderr, "slurm: poll failed, polling again (%v)\n", err)
			if err := pause(); err != nil {
				return err
			}
			continue
		}
		failingSince = time.Time{}
		ended = map[string]bool{}
		for _, s := range rep.Stages {
			ended[s.Name] = s.State == slurm.StateDone || s.State == slurm.StateFailed || s.State == slurm.StateCancelled
		}
		if err := waitVerdict(rep, unseenSince, time.Now(), j.f.unseenLimit); err != nil {
			printSlurmReport(j, rep)
			return err
		}
		if oom := memRetries(rep, memRetried); len(oom) > 0 {
			for _, s := range oom {
				memRetried[s.Name] = true
				fmt.Fprintf(os.Stderr, "slurm: stage %s's job %s ran out of memory; submitting it again with the site's mem_retry %s (once)\n", s.Name, s.JobID, s.RetryMem)
			}
			if nodes, watch, err = j.resubmit(); err != nil {
				return err
			}
			continue
		}
		final := rep.Stages[len(rep.Stages)-1]
		active := rep.Count(slurm.StatePending) + rep.Count(slurm.StateRunning)
		switch {
		case final.State == slurm.StateCached:
			fmt.Fprintf(os.Stderr, "slurm: %s done (squeue calls: %d, sbatch calls: %d, store lookups while waiting: %d)\n", j.plan.Profile, j.sub.Client.Calls["squeue"], j.sub.Client.Calls["sbatch"], watch.Lookups)
			return j.export()
		case active == 0 && rep.Count(slurm.StateDone) == 0 && onlyCancelled(rep) && resubmits < 2:
			// No stage failed by itself: jobs were cancelled, e.g. a
			// dependent whose parent requeued itself (Slurm can see the
			// requeued parent as cancelled for a moment and kill its
			// afterok dependents). Submit what is missing again.
			resubmits++
			fmt.Fprintf(os.Stderr, "slurm: %d stages cancelled without a failure; submitting them again\n", rep.Count(slurm.StateFailed)+rep.Count(slurm.StateSkipped)+rep.Count(slurm.StateCancelled))
			if nodes, watch, err = j.resubmit(); err != nil {
				return err
			}
			continue
		case active == 0 && rep.Count(slurm.StateDone) == 0:
			printSlurmReport(j, rep)
			return fmt.Errorf("slurm: %s cannot finish: no job is pending or running and %s is not in the store (%d failed, %d skipped, %d cancelled, %d not submitted); fix the failure and submit again",
				j.plan.Profile, last, rep.Count(slurm.StateFailed), rep.Count(slurm.StateSkipped), rep.Count(slurm.StateCancelled), rep.Count(slurm.StateNotSubmitted))
		}
		if err := pause(); err != nil {
			return err
		}
	}
}

// memRetries are the stages to submit again with mem_retry: their job ran
// out of memory below it, and --wait has not retried them yet.
func memRetries(rep *slurm.Report, retried map[string]bool) []slurm.StageState {
	var out []slurm.StageState
	for _, s := range rep.Stages {
		if s.RetryMem != "" && !retried[s.Name] {
			out = append(out, s)
		}
	}
	return out
}

// startWatch reads the plan's state in the store once (every blob
// verified) and starts a watch from it.
func (j *slurmJob) startWatch() ([]slurm.Node, *pipeline.Watch, error) {
	nodes, done, err := j.nodesAndDone()
	if err != nil {
		return nil, nil, err
	}
	return nodes, j.runner.NewWatch(j.plan, done), nil
}

// poll is one poll of --wait: the store through the watch (a stage whose
// job ended at the last poll is looked up even if no run log names it),
// then Slurm.
func (j *slurmJob) poll(nodes []slurm.Node, watch *pipeline.Watch, ended map[string]bool) (*slurm.Report, error) {
	lines, err := watch.Poll(func(stage string) bool { return ended[stage] })
	if err != nil {
		return nil, err
	}
	for i := range nodes {
		nodes[i].Cached = lines[i].Cached
		// A stage a run log names done was looked up by this poll: its
		// miss is real, not a delay (see pipeline.Runner.Gone).
		nodes[i].Gone = ""
		if !lines[i].Cached && lines[i].Key != "" && watch.Seen(lines[i].Key) {
			nodes[i].Gone = lines[i].Reason
		}
	}
	return j.sub.Status(nodes, 15, true)
}

func kindOf(plan *pipeline.Plan, stage string) string {
	if s, ok := plan.Stage(stage); ok {
		return s.Kind
	}
	return "?"
}

// resubmit submits what is missing again and restarts the watch.
func (j *slurmJob) resubmit() ([]slurm.Node, *pipeline.Watch, error) {
	nodes, watch, err := j.startWatch()
	if err != nil {
		return nil, nil, err
	}
	if _, err := j.sub.Submit(nodes); err != nil {
		return nil, nil, err
	}
	return nodes, watch, nil
}

// onlyCancelled: every stage that did not finish had its job cancelled
// (none failed, timed out or ran out of memory), and some did not finish.
func onlyCancelled(rep *slurm.Report) bool {
	n := 0
	for _, s := range rep.Stages {
		if s.State == slurm.StateFailed || s.State == slurm.StateSkipped || s.State == slurm.StateCancelled {
			if !strings.HasPrefix(s.JobState, "CANCELLED") && !strings.HasPrefix(s.JobState, "PENDING") {
				return false
			}
			n++
		}
	}
	return n > 0
}

// export writes RESULTS.md (or the sweep's study) from the store: the same
// artifact reproduce and sweep copy out.
// Its Status verifies the plan's blobs once more, as reproduce's export
// does, before anything is copied out.
func (j *slurmJob) export() error {
	_, done, err := j.runner.Status(j.plan)
	if err != nil {
		return err
	}
	if j.c.sweep == "" {
		return exportResults(done, j.c.outDir())
	}
	art, ok := done[study.Kind]
	if !ok {
		return fmt.Errorf("sweep %s: no %s artifact in the store", j.c.sweep, study.Kind)
	}
	return exportStudy(art, j.c.outDir())
}

// status is `slurm status`: the store (every blob verified), the run logs
// for stages the store had and lost (missing), then Slurm.
func (j *slurmJob) status(cancelDead bool) (*slurm.Report, error) {
	lines, done, err := j.runner.Status(j.plan)
	if err != nil {
		return nil, err
	}
	nodes, err := j.nodesFrom(lines, done)
	if err != nil {
		return nil, err
	}
	gone, err := j.runner.Gone(lines)
	if err != nil {
		return nil, err
	}
	for i := range nodes {
		nodes[i].Gone = gone[nodes[i].Name]
	}
	return j.sub.Status(nodes, 15, cancelDead)
}

// plannedMarker is in both errors of a job that is not the stage the
// submitter planned (pipeline.KeyMismatchError and runOnly's recipe check).
const plannedMarker = "not the stage the submitter planned"

// waitVerdict ends --wait early where polling longer cannot help: a job
// that is not the stage planned (its key would never appear), a job
// pending for a reason that does not clear, or a completed stage that
// stays out of the store past limit. unseenSince remembers when each stage
// was first seen done-unseen.
func waitVerdict(rep *slurm.Report, unseenSince map[string]time.Time, now time.Time, limit time.Duration) error {
	for _, s := range rep.Stages {
		switch {
		case s.State == slurm.StateFailed && tailHas(s.Tail, plannedMarker):
			return fmt.Errorf("slurm: stage %s (job %s) is not the stage this submission planned: its job runs another binary, Go version, checkout or configuration; see its log %s", s.Name, s.JobID, s.Log)
		case s.State == slurm.StateMissing:
			return fmt.Errorf("slurm: stage %s: %s (`routebench slurm submit` with the same flags)", s.Name, s.Note)
		case s.State == slurm.StatePending && s.Stuck:
			return fmt.Errorf("slurm: stage %s's job %s is pending for a reason that does not clear (%s): change its limits in the site file, `routebench slurm cancel`, and submit again", s.Name, s.JobID, s.Reason)
		case s.State == slurm.StateDone:
			first, ok := unseenSince[s.Name]
			if !ok {
				unseenSince[s.Name] = now
			} else if now.Sub(first) > limit {
				return fmt.Errorf("slurm: stage %s: its job %s ended %s but the stage has not been in the store for %s (--unseen-limit): the job stored another key or the store is not shared with this host; see its log %s", s.Name, s.JobID, s.JobState, limit, s.Log)
			}
		default:
			delete(unseenSince, s.Name)
		}
	}
	return nil
}

func tailHas(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

func printSlurmReport(j *slurmJob, rep *slurm.Report) {
	fmt.Printf("profile %s, store %s, logs %s\n", j.plan.Profile, j.runner.Store.Root(), j.sub.LogDir)
	for _, s := range rep.Stages {
		job := ""
		if s.JobID != "" {
			job = "job " + s.JobID + " " + s.JobState
		}
		if s.Reason != "" && s.Reason != "None" {
			job += " (" + s.Reason + ")"
		}
		if s.Stuck {
			job += ": does not clear by itself"
		}
		fmt.Printf("  %-30s %-13s %s\n", s.Name, s.State, job)
		if s.State != slurm.StateCached && s.State != slurm.StateNotSubmitted {
			fmt.Printf("  %-30s   log %s\n", "", s.Log)
		}
		if s.Note != "" {
			fmt.Printf("  %-30s   %s\n", "", s.Note)
		}
		for _, l := range s.Tail {
			fmt.Printf("  %-30s   | %s\n", "", l)
		}
	}
	if len(rep.Dead) > 0 {
		fmt.Printf("jobs pending behind a failed stage (never run; `slurm status --cancel-dead` or `slurm cancel` cancels them): %s\n", strings.Join(rep.Dead, " "))
	}
	if len(rep.Cancelled) > 0 {
		fmt.Printf("cancelled jobs pending behind a failed stage: %s\n", strings.Join(rep.Cancelled, " "))
	}
	if rep.NoAccounting {
		fmt.Println("note: Slurm accounting is disabled (sacct); a job squeue no longer lists (older than MinJobAge) shows as not-submitted")
	}
}

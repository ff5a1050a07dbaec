package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"routebench/artifacts"
)

// RunInfoFile is written by the runner into every artifact: wall time and
// machine. It is always volatile (never compared, never hashed downstream).
const RunInfoFile = "run.json"

// RunInfo is the content of RunInfoFile.
type RunInfo struct {
	Stage   string  `json:"stage"`
	Key     string  `json:"key"`
	Started string  `json:"started"`
	WallSec float64 `json:"wall_seconds"`
	CPU     string  `json:"cpu"`
	Cores   int     `json:"cores"`
	Go      string  `json:"go"`
}

// Runner executes plans against a store.
type Runner struct {
	Store *artifacts.Store
	// Verify ignores hits, recomputes, and fails if a stage's stable output
	// differs from the cached one.
	Verify bool
	// Force reruns the named stages (by name or kind) even when cached.
	Force map[string]bool
	// DebugKey, if set, receives every line that went into each key.
	DebugKey io.Writer
	// Log receives progress and the run summary; nil means os.Stderr.
	Log io.Writer
	// Interactive draws progress bars instead of periodic log lines.
	Interactive bool
	// OnExecute is called before a stage's Run (a spy for tests).
	OnExecute func(s *Stage)
	// Now is the clock (injected by tests).
	Now func() time.Time
	// Attempt names this process's work dirs (see execute); empty means
	// the host, the pid and, in a Slurm job, the job id and restart count.
	Attempt string
}

// Record is one line of the run log.
type Record struct {
	Stage   string   `json:"stage"`
	Key     string   `json:"key"`
	Result  string   `json:"result"` // hit, ran, verified; running or failed (see runLog)
	Reason  string   `json:"reason,omitempty"`
	WallSec float64  `json:"wall_seconds"`
	Outputs []string `json:"outputs,omitempty"` // name:output-id
}

// Result is what a run produced.
type Result struct {
	Artifacts map[string]*artifacts.Artifact // by stage name
	Records   []Record
}

func (r *Runner) logw() io.Writer {
	if r.Log == nil {
		return os.Stderr
	}
	return r.Log
}

func (r *Runner) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

func (r *Runner) forced(s *Stage) bool { return r.Force[s.Name] || r.Force[s.Kind] }

// Run executes the plan in order, skipping stages whose key is cached.
func (r *Runner) Run(ctx context.Context, plan *Plan) (*Result, error) {
	res := &Result{Artifacts: map[string]*artifacts.Artifact{}}
	log := r.newRunLog(plan)
	for _, s := range plan.Stages {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("interrupted before stage %s: %w", s.Name, err)
		}
		rec, art, err := r.runStage(ctx, s, res.Artifacts, func(pending Record) {
			log.write(append(res.Records, pending))
		})
		if err != nil {
			if rec.Key != "" {
				rec.Result = "failed"
				log.write(append(res.Records, rec))
			}
			return res, err
		}
		res.Artifacts[s.Name] = art
		res.Records = append(res.Records, rec)
		log.write(res.Records)
		r.say(rec)
	}
	return res, nil
}

// say prints a stage's result line (make test-slurm counts the "ran" lines).
func (r *Runner) say(rec Record) {
	verb := rec.Result
	if rec.Reason != "" {
		verb += " (" + rec.Reason + ")"
	}
	fmt.Fprintf(r.logw(), "%-28s %s  %s  %.1fs\n", rec.Stage, rec.Key[:12], verb, rec.WallSec)
}

// stageKey computes a stage's key from the artifacts of its inputs (which
// must all be in done) and prints it under --debug-key.
func (r *Runner) stageKey(s *Stage, done map[string]*artifacts.Artifact) (Key, error) {
	digests := map[string]string{}
	for _, in := range s.Inputs {
		a, ok := done[in.Stage.Name]
		if !ok {
			return Key{}, fmt.Errorf("stage %s: input %s has not run", s.Name, in.Stage.Name)
		}
		digests[in.Name] = StableDigest(in.Stage, a)
	}
	key, err := ComputeKey(s, digests)
	if err != nil {
		return Key{}, err
	}
	if r.DebugKey != nil {
		fmt.Fprintf(r.DebugKey, "key %s for stage %s:\n%s\n", key.ID, s.Name, key.Text)
	}
	return key, nil
}

// runStage looks up or runs one stage. onKey receives the stage's record
// as soon as its key is known, before the store is read: the run log names
// the key before this run depends on its artifact (see runLog).
func (r *Runner) runStage(ctx context.Context, s *Stage, done map[string]*artifacts.Artifact, onKey func(Record)) (Record, *artifacts.Artifact, error) {
	key, err := r.stageKey(s, done)
	if err != nil {
		return Record{}, nil, err
	}
	rec := Record{Stage: s.Name, Key: key.ID.String()}
	onKey(Record{Stage: s.Name, Key: rec.Key, Result: "running"})
	// One lookup across the wait for the action lock: a blob the first Get
	// verified is not hashed again after the wait unless its file changed.
	look := r.Store.NewLookup(key.ID)
	cached, missErr := look.Get()
	if missErr != nil && !artifacts.IsMiss(missErr) {
		return rec, nil, missErr
	}
	if cached != nil && !r.Verify && !r.forced(s) {
		rec.Result = "hit"
		return rec, cached, nil
	}
	unlock, err := r.Store.ActionLock(key.ID)
	if err != nil {
		return rec, nil, err
	}
	defer unlock()
	if !r.Verify && !r.forced(s) {
		// Another process may have finished this stage while we waited.
		if a, err := look.Get(); err == nil {
			rec.Result, rec.Reason = "hit", "computed by another process"
			return rec, a, nil
		}
	}
	switch {
	case r.Verify:
		rec.Reason = "verify"
	case r.forced(s):
		rec.Reason = "forced"
	default:
		rec.Reason = missErr.(*artifacts.Miss).Reason
	}
	art, existed, wall, err := r.execute(ctx, s, key, done, cached)
	rec.WallSec = wall.Seconds()
	if err != nil {
		return rec, nil, err
	}
	rec.Result = "ran"
	damaged := false
	if m, ok := missErr.(*artifacts.Miss); ok && !r.Verify && !r.forced(s) {
		damaged = m.Damaged()
	}
	switch {
	case damaged && existed:
		// The entry this run found damaged verifies now: the blobs this
		// run stored (identical, the stage is deterministic) made it
		// whole, or another attempt repaired it meanwhile.
		rec.Reason += "; repaired: the damaged entry verifies with this run's output and is kept"
	case damaged:
		rec.Reason += "; repaired: this run's output replaces the damaged entry"
	case existed:
		rec.Reason += "; another attempt committed it first: its output is kept"
	}
	if r.Verify && cached != nil {
		rec.Result = "verified" // execute compared the output before committing it
	}
	for _, f := range art.Files {
		rec.Outputs = append(rec.Outputs, f.Name+":"+f.ID.Short())
	}
	return rec, art, nil
}

// execute runs one stage into a work dir of its own attempt and commits
// the outputs; existed says another attempt had committed the key first
// and its artifact is returned.
//
// Each attempt (a process; under Slurm a job and its restart count) works
// in <store>/work/<key>/<attempt>/{out,scratch} and removes only that
// directory: a requeued job and a straggler of the same stage, on nodes
// where flock does not reach, never delete or commit each other's files.
// A new attempt starts its scratch from the newest checkpoint files
// earlier attempts left (copied, never moved: their owner may still be
// running). The commit is PutOnce's: the first complete index entry wins,
// so two attempts at once leave one committed output. Forced and verify
// runs replace the entry, as they always did.
//
// A verify run compares its output with the cached entry before it commits
// anything: a recomputation that differs is reported and thrown away, and
// the entry it was checked against stays as it was (the evidence of what the
// first run computed, and what the other runs sharing the store read).
func (r *Runner) execute(ctx context.Context, s *Stage, key Key, done map[string]*artifacts.Artifact, cached *artifacts.Artifact) (*artifacts.Artifact, bool, time.Duration, error) {
	work := r.Store.WorkDir(key.ID)
	attempt := filepath.Join(work, r.attemptName())
	out := filepath.Join(attempt, "out")
	scratch := filepath.Join(attempt, "scratch")
	for _, d := range []string{out, scratch} {
		if err := r.Store.MkdirAll(d); err != nil {
			return nil, false, 0, fmt.Errorf("stage %s: creating its work dir: %w", s.Name, err)
		}
	}
	if err := resumeScratch(work, attempt, scratch, func(line string) { fmt.Fprintf(r.logw(), "%s: %s\n", s.Name, line) }); err != nil {
		return nil, false, 0, fmt.Errorf("stage %s: %w", s.Name, err)
	}
	inputs := map[string]*artifacts.Artifact{}
	for _, in := range s.Inputs {
		inputs[in.Name] = done[in.Stage.Name]
	}
	prog := newProgress(s.Name, r.Interactive, r.logw())
	stream := r.openStreamLog(s, key)
	stream.write(StreamEvent{Event: "start"})
	rc := &RunContext{
		Context: ctx, Stage: s, Inputs: inputs, OutDir: out, WorkDir: scratch,
		Logf: func(format string, args ...any) {
			prog.pause()
			stream.write(StreamEvent{Event: "log", Note: fmt.Sprintf(format, args...)})
			fmt.Fprintf(r.logw(), "%s: %s\n", s.Name, fmt.Sprintf(format, args...))
		},
		Progress: func(done, total int64, note string) {
			stream.progress(done, total, note, nil)
			prog.update(done, total, note)
		},
		Measured: func(done, total int64, note string, f Figures) {
			stream.progress(done, total, note, &f)
			prog.update(done, total, note)
		},
	}
	if r.OnExecute != nil {
		r.OnExecute(s)
	}
	start := r.now()
	err := runSafely(s, rc)
	prog.finish()
	wall := r.now().Sub(start)
	stream.close(wall, err)
	if err != nil {
		// No artifact; the attempt's scratch (checkpoints) seeds the next one.
		return nil, false, wall, fmt.Errorf("stage %s failed: %w", s.Name, err)
	}
	info := RunInfo{Stage: s.Name, Key: key.ID.String(), Started: start.UTC().Format(time.RFC3339), WallSec: wall.Seconds(),
		CPU: CPUModel(), Cores: runtime.NumCPU(), Go: runtime.Version()}
	b, _ := json.MarshalIndent(info, "", "  ")
	if err := os.WriteFile(filepath.Join(out, RunInfoFile), append(b, '\n'), 0o644); err != nil {
		return nil, false, wall, fmt.Errorf("stage %s: %w", s.Name, err)
	}
	if r.Verify && cached != nil {
		fresh, err := artifacts.Describe(key.ID, s.Name, out)
		if err == nil {
			err = compareOutputs(s, cached, fresh)
		}
		if err != nil {
			os.RemoveAll(attempt)
			os.Remove(work) // only if no other attempt's dir is left in it
			return nil, false, wall, fmt.Errorf("%w; the store's entry is left as it was", err)
		}
	}
	var art *artifacts.Artifact
	existed := false
	if r.Verify || r.forced(s) {
		art, err = r.Store.Put(key.ID, s.Name, out)
	} else {
		art, existed, err = r.Store.PutOnce(key.ID, s.Name, out)
	}
	if err != nil {
		return nil, false, wall, err
	}
	os.RemoveAll(attempt)
	removeDeadAttempts(work, filepath.Base(attempt))
	os.Remove(work) // only if no other attempt's dir is left in it
	return art, existed, wall, nil
}

// runSafely turns a panic inside a stage into an error, so that a bug is
// reported with the stage's name and nothing is committed.
func runSafely(s *Stage, rc *RunContext) (err error) {
	defer func() {
		if p := recover(); p != nil {
			buf := make([]byte, 8192)
			n := runtime.Stack(buf, false)
			err = fmt.Errorf("panic: %v\n%s", p, buf[:n])
		}
	}()
	return s.Run(rc)
}

// compareOutputs fails when a recomputed stage's stable files differ from
// the cached ones: the stage is not deterministic, or the cache was
// poisoned.
func compareOutputs(s *Stage, cached, fresh *artifacts.Artifact) error {
	if StableDigest(s, cached) == StableDigest(s, fresh) {
		return nil
	}
	vol := volatileSet(s)
	old := map[string]string{}
	for _, f := range cached.Files {
		old[f.Name] = f.ID.Short()
	}
	var diffs []string
	for _, f := range fresh.Files {
		if vol[f.Name] {
			continue
		}
		if o, ok := old[f.Name]; !ok {
			diffs = append(diffs, f.Name+": new file")
		} else if o != f.ID.Short() {
			diffs = append(diffs, fmt.Sprintf("%s: cached %s, recomputed %s", f.Name, o, f.ID.Short()))
		}
		delete(old, f.Name)
	}
	for n := range old {
		if !vol[n] {
			diffs = append(diffs, n+": missing from the recomputation")
		}
	}
	sort.Strings(diffs)
	return fmt.Errorf("verify: stage %s is not deterministic: its recomputed output differs from the cached one (%s)", s.Name, strings.Join(diffs, "; "))
}

// CPUModel reads the CPU model name for run records.
func CPUModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

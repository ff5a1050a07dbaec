package pipeline

import (
	"context"
	"fmt"
	"time"

	"routebench/artifacts"
)

// OnlyOptions tune RunOnly.
type OnlyOptions struct {
	// InputWait bounds the wait for the stage's inputs to be in the store.
	InputWait time.Duration
	// Backoff is the first pause between looks (default 2s), doubled after
	// each look up to MaxBackoff (default 30s).
	Backoff, MaxBackoff time.Duration
	// ExpectKey is the key the submitter planned for the stage ("" when it
	// could not know it: an input was not computed yet).
	ExpectKey string
	// Sleep pauses between looks (default: a timer that ctx cancels).
	Sleep func(ctx context.Context, d time.Duration) error
}

// MissingInputError: a stage's input is still not in the store when the
// wait for it ends.
type MissingInputError struct {
	Stage, Input, Key, Reason, Store string
	Waited                           time.Duration
	Looks                            int
}

func (e *MissingInputError) Error() string {
	return fmt.Sprintf("stage %s: its input %s (key %s) is not in the store %s after %s and %d looks (%s); this job runs %s only and never computes its inputs: "+
		"the input's job failed, or its output is not visible on this node yet (NFS); see `routebench slurm status`, then submit again",
		e.Stage, e.Input, e.Key, e.Store, e.Waited.Round(time.Second), e.Looks, e.Reason, e.Stage)
}

// KeyMismatchError: the key this process would write is not the one the
// submitter planned.
type KeyMismatchError struct {
	Stage, Planned, Got string
}

func (e *KeyMismatchError) Error() string {
	return fmt.Sprintf("stage %s: this job would write key %s but the submitter planned key %s (not the stage the submitter planned): the job runs another binary, Go version, checkout or configuration than the submitter "+
		"(compare `routebench plan --debug-key` on both); nothing was computed", e.Stage, e.Got, e.Planned)
}

// RunOnly runs the named stage of plan alone, as a cluster job does: every
// stage it depends on must already be in the store. It never computes an
// input: a missing one is looked for again, with backoff, until
// opt.InputWait has passed (re-reading the store's directories each time,
// see Store.Revalidate), and then it fails naming the input's key. Once the
// inputs are there the stage's key is checked against opt.ExpectKey, and
// the stage is looked up or run as Run would.
func (r *Runner) RunOnly(ctx context.Context, plan *Plan, name string, opt OnlyOptions) (*Result, error) {
	s, ok := plan.Stage(name)
	if !ok {
		return nil, fmt.Errorf("run --only: no stage %q in plan %s (stages: %s)", name, plan.Profile, plan.names())
	}
	closure, err := plan.Closure(name)
	if err != nil {
		return nil, err
	}
	upstream := closure.Stages[:len(closure.Stages)-1] // s is last: all the others are its ancestors
	backoff, maxBackoff := opt.Backoff, opt.MaxBackoff
	if backoff <= 0 {
		backoff = 2 * time.Second
	}
	if maxBackoff <= 0 {
		maxBackoff = 30 * time.Second
	}
	sleep := opt.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	start := r.now()
	var res *Result
	for looks := 1; ; looks++ {
		var miss *MissingInputError
		res, miss, err = r.lookUpInputs(upstream)
		if err != nil {
			return nil, err
		}
		if miss == nil {
			break
		}
		miss.Stage, miss.Store, miss.Looks = name, r.Store.Root(), looks
		miss.Waited = r.now().Sub(start)
		if miss.Waited >= opt.InputWait {
			return nil, miss
		}
		pause := min(backoff, opt.InputWait-miss.Waited)
		fmt.Fprintf(r.logw(), "%s: waiting for input %s (key %s: %s); next look in %s\n", name, miss.Input, miss.Key[:12], miss.Reason, pause.Round(time.Millisecond))
		if err := sleep(ctx, pause); err != nil {
			return nil, fmt.Errorf("stage %s: stopped waiting for input %s: %w", name, miss.Input, err)
		}
		backoff = min(backoff*2, maxBackoff)
	}
	key, err := r.stageKey(s, res.Artifacts)
	if err != nil {
		return nil, err
	}
	if opt.ExpectKey != "" && key.ID.String() != opt.ExpectKey {
		return nil, &KeyMismatchError{Stage: name, Planned: opt.ExpectKey, Got: key.ID.String()}
	}
	log := r.newRunLog(closure)
	log.write(res.Records)
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
	res.Artifacts[name] = art
	res.Records = append(res.Records, rec)
	log.write(res.Records)
	r.say(rec)
	return res, nil
}

// lookUpInputs finds every stage of upstream (in plan order) in the store,
// or says which is the first one missing.
func (r *Runner) lookUpInputs(upstream []*Stage) (*Result, *MissingInputError, error) {
	res := &Result{Artifacts: map[string]*artifacts.Artifact{}}
	for _, u := range upstream {
		key, err := r.stageKey(u, res.Artifacts)
		if err != nil {
			return nil, nil, err
		}
		r.Store.Revalidate(key.ID)
		art, err := r.Store.Get(key.ID)
		if artifacts.IsMiss(err) {
			return nil, &MissingInputError{Input: u.Name, Key: key.ID.String(), Reason: err.(*artifacts.Miss).Reason}, nil
		}
		if err != nil {
			return nil, nil, err
		}
		res.Artifacts[u.Name] = art
		res.Records = append(res.Records, Record{Stage: u.Name, Key: key.ID.String(), Result: "hit"})
	}
	return res, nil, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

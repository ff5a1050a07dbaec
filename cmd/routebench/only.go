package main

import (
	"context"
	"fmt"
	"path/filepath"

	"routebench/pipeline"
)

// runOnly is `run STAGE --only`, the command of a Slurm job: the stage
// alone, never its inputs (an evaluate job whose node cannot see train's
// output yet must wait for it, not retrain inside its own time limit).
// The recipe is checked first, before any wait: a job whose binary, Go
// version, checkout or configuration differs from the submitter's would
// store its stage under a key nobody waits for.
func runOnly(ctx context.Context, c *common, r *pipeline.Runner, plan *pipeline.Plan, o *onlyFlags) error {
	if len(c.args) != 1 {
		return fmt.Errorf("run --only takes exactly one stage name (got %v): %w", c.args, errUsage)
	}
	name := c.args[0]
	if _, ok := plan.Stage(name); !ok {
		return fmt.Errorf("run --only %s: no stage of that name in plan %s (a kind is not enough: name the stage, e.g. train/rope)", name, plan.Profile)
	}
	if o.expectRecipe != "" {
		store, err := filepath.Abs(r.Store.Root())
		if err != nil {
			return err
		}
		recipe := map[string]string{}
		closure, err := plan.Closure(name)
		if err != nil {
			return err
		}
		for _, s := range closure.Stages {
			if recipe[s.Name], err = stageRecipe(s, recipe, store); err != nil {
				return err
			}
		}
		if got := recipe[name]; got != o.expectRecipe {
			return fmt.Errorf("stage %s: this job's recipe %s is not the submitter's %s (not the stage the submitter planned): the job would write another key than the planned one (planned key %s), because its binary, Go version, checkout, configuration or store differs from the submitter's "+
				"(compare `routebench plan --debug-key` on both); nothing was computed", name, got, o.expectRecipe, orUnknown(o.expectKey))
		}
	}
	_, err := r.RunOnly(ctx, plan, name, pipeline.OnlyOptions{InputWait: o.inputWait, ExpectKey: o.expectKey})
	return err
}

func orUnknown(key string) string {
	if key == "" {
		return "not known at submit: an input had not run"
	}
	return key
}

package main

import (
	"fmt"
	"os"
)

// cmdCat prints one file of a cached stage's artifact (or, without a file
// name, lists the artifact's files): how a script reads, say, the speed
// figures of a GPU training run without knowing the store's layout.
func cmdCat(args []string) error {
	c, r, plan, err := parseAndSetup("cat", args, true)
	if err != nil {
		return err
	}
	if len(c.args) < 1 || len(c.args) > 2 {
		return fmt.Errorf("cat takes a stage name and optionally a file name (got %q): %w", c.args, errUsage)
	}
	stage := c.args[0]
	if _, err := plan.Closure(stage); err != nil {
		return err
	}
	lines, arts, err := r.Status(plan)
	if err != nil {
		return err
	}
	art, ok := arts[stage]
	if !ok {
		reason := "not in the store"
		for _, l := range lines {
			if l.Stage == stage {
				reason = l.Reason
			}
		}
		return fmt.Errorf("stage %s of profile %s is not cached (%s): run `routebench run %s --profile %s` with the same --config first", stage, plan.Profile, reason, stage, plan.Profile)
	}
	if len(c.args) == 1 {
		for _, name := range art.Names() {
			fmt.Println(name)
		}
		return nil
	}
	name := c.args[1]
	data, err := art.ReadFile(name)
	if err != nil {
		return fmt.Errorf("stage %s has no file %q (list them with `routebench cat %s`): %w", stage, name, stage, err)
	}
	_, err = os.Stdout.Write(data)
	return err
}

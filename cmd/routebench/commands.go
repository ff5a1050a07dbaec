package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"routebench/artifacts"
	"routebench/bench/compare"
	"routebench/pipeline"
	"routebench/planner"
)

func cmdReproduce(ctx context.Context, args []string) error {
	c, err := parseCommon("reproduce", args)
	if err != nil {
		return err
	}
	if len(c.args) > 0 {
		return fmt.Errorf("reproduce takes no arguments (got %v): %w", c.args, errUsage)
	}
	if err := c.refuseSweep("reproduce"); err != nil {
		return err
	}
	res, err := c.runAll(ctx, "profile ")
	if err != nil {
		return err
	}
	return exportResults(res.Artifacts, c.outDir())
}

// runAll runs the whole plan of c's profile or sweep and prints a one-line
// summary (label, then the plan's name) to stderr.
func (c *common) runAll(ctx context.Context, label string) (*pipeline.Result, error) {
	r, plan, err := c.setup()
	if err != nil {
		return nil, err
	}
	// The estimate first, so that a user can stop a run longer than
	// expected before it starts.
	writeRunEstimate(os.Stderr, label, r, plan)
	start := time.Now()
	res, err := r.Run(ctx, plan)
	if err != nil {
		return nil, err
	}
	ran := 0
	for _, rec := range res.Records {
		if rec.Result != "hit" {
			ran++
		}
	}
	fmt.Fprintf(os.Stderr, "%s%s: %d stages, %d ran, %d cached, %s\n", label, plan.Profile, len(res.Records), ran, len(res.Records)-ran, time.Since(start).Round(time.Millisecond))
	return res, nil
}

// onlyFlags are run's flags for a cluster job (see runOnly).
type onlyFlags struct {
	only                    bool
	inputWait               time.Duration
	expectKey, expectRecipe string
}

func cmdRun(ctx context.Context, args []string) error {
	var o onlyFlags
	c, err := parseCommonWith("run", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&o.only, "only", false, "run one stage alone: its inputs must be in the store")
		fs.DurationVar(&o.inputWait, "input-wait", 10*time.Minute, "with --only: how long to wait for the inputs")
		fs.StringVar(&o.expectKey, "expect-key", "", "with --only: the key the submitter planned")
		fs.StringVar(&o.expectRecipe, "expect-recipe", "", "with --only: the recipe the submitter planned")
	})
	if err != nil {
		return err
	}
	if len(c.args) == 0 {
		return fmt.Errorf("run needs a stage name: %w", errUsage)
	}
	r, plan, err := c.setup()
	if err != nil {
		return err
	}
	if o.only || o.expectKey != "" || o.expectRecipe != "" {
		return runOnly(ctx, c, r, plan, &o)
	}
	sub, err := plan.Closure(c.args...)
	if err != nil {
		return err
	}
	_, err = r.Run(ctx, sub)
	return err
}

func cmdStatus(args []string) error {
	_, r, plan, err := parseAndSetup("status", args, true)
	if err != nil {
		return err
	}
	lines, _, err := r.Status(plan)
	if err != nil {
		return err
	}
	fmt.Printf("profile %s, store %s\n", plan.Profile, r.Store.Root())
	for _, l := range lines {
		key := "(pending)   "
		if l.Key != "" {
			key = l.Key[:12]
		}
		state := "cached"
		if !l.Cached {
			state = "would run: " + l.Reason
		}
		fmt.Printf("  %-28s %s  %s\n", l.Stage, key, state)
	}
	return nil
}

func cmdVerify(ctx context.Context, args []string) error {
	c, r, plan, err := parseAndSetup("verify", args, false)
	if err != nil {
		return err
	}
	if len(c.args) > 0 {
		if plan, err = plan.Closure(c.args...); err != nil {
			return err
		}
	}
	r.Verify = true
	if _, err := r.Run(ctx, plan); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "verify: every stage of %s recomputed to the same output\n", plan.Profile)
	return nil
}

func cmdResults(ctx context.Context, args []string) error {
	c, err := parseCommon("results", args)
	if err != nil {
		return err
	}
	if err := c.refuseSweep("results"); err != nil {
		return err
	}
	r, plan, err := c.setup()
	if err != nil {
		return err
	}
	lines, _, err := r.Status(plan)
	if err != nil {
		return err
	}
	if err := requireCached(plan, lines, planner.ReportStage); err != nil {
		return err
	}
	// Everything the report reads is cached; the report itself may need
	// to be (re)written, e.g. for a new commit label. That takes a second.
	sub, err := plan.Closure(planner.ReportStage)
	if err != nil {
		return err
	}
	res, err := r.Run(ctx, sub)
	if err != nil {
		return err
	}
	return exportResults(res.Artifacts, c.outDir())
}

// requireCached fails, naming the first stage and the command to run, unless
// every stage of the plan but except is cached.
func requireCached(plan *pipeline.Plan, lines []pipeline.StatusLine, except string) error {
	for _, l := range lines {
		if !l.Cached && l.Stage != except {
			return fmt.Errorf("stage %s of profile %s is not cached (%s): run `routebench reproduce --profile %s` first", l.Stage, plan.Profile, l.Reason, plan.Profile)
		}
	}
	return nil
}

// exportResults copies the report stage's files (RESULTS.md, plots, CSV)
// out of the store. The report stage wrote them; this only copies bytes.
func exportResults(arts map[string]*artifacts.Artifact, dir string) error {
	rep, ok := arts[planner.ReportStage]
	if !ok {
		return fmt.Errorf("no cached %s artifact for this profile: run `routebench reproduce` first", planner.ReportStage)
	}
	wrote, err := exportArtifact(rep, dir)
	if err != nil {
		return err
	}
	if err := removeStaleTables(wrote); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "results: %s\n", filepath.Join(dir, planner.ResultsFile))
	return nil
}

// exportArtifact copies every file of a stage's artifact (but its run
// record) into dir, keeping the artifact's relative paths, and returns the
// paths it wrote.
func exportArtifact(art *artifacts.Artifact, dir string) ([]string, error) {
	var wrote []string
	for _, name := range art.Names() {
		if name == pipeline.RunInfoFile {
			continue
		}
		data, err := art.ReadFile(name)
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return nil, fmt.Errorf("exporting %s: %w", dst, err)
		}
		wrote = append(wrote, dst)
	}
	return wrote, nil
}

func cmdBench(args []string) error {
	switch {
	case len(args) == 3 && args[0] == "compare":
		return compare.Files(os.Stdout, args[1], args[2])
	case len(args) == 2 && args[0] == "summary":
		return compare.Summary(os.Stdout, args[1])
	}
	return fmt.Errorf("bench: want `bench compare OLD NEW` (two benchmark files, e.g. from `make bench`) or `bench summary FILE` (one run's GFLOP/s against its OpenBLAS peak, from `make bench-speed`): %w", errUsage)
}

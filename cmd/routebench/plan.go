package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"routebench/planner/hostcal"
)

// planStage is one stage of `routebench plan --json`: enough for a
// scheduler to run the plan level by level against a shared store.
type planStage struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Level is the length of the longest input chain below the stage: the
	// stages of one level need only those of lower levels, so a level's
	// stages can run at once when the lower levels are done.
	Level  int      `json:"level"`
	Inputs []string `json:"inputs"` // stage names
	// Key is the action key as `status` computes it; null until every
	// input is cached (the key hashes the inputs' outputs), WaitsFor then
	// names the inputs that are not.
	Key      *string  `json:"key"`
	WaitsFor []string `json:"waits_for,omitempty"`
	Cached   bool     `json:"cached"`
	// Command runs the stage alone (and, were they missing, its inputs)
	// with the plan's profile, overrides and store, from Dir; Argv is the
	// same command unquoted.
	Command string   `json:"command"`
	Argv    []string `json:"argv"`
	// EstimateSec is the stage's estimated wall time on this machine
	// (planner/cost), EstimateCal the calibration that priced it.
	EstimateSec float64 `json:"estimate_seconds"`
	EstimateCal string  `json:"estimate_calibration"`
}

type planOutput struct {
	Profile  string       `json:"profile"`
	Store    string       `json:"store"`
	Dir      string       `json:"dir"` // where the commands run (relative --config, --corpus and --eval-corpus paths)
	Levels   int          `json:"levels"`
	Stages   []planStage  `json:"stages"`
	Estimate planEstimate `json:"estimate"`
}

func cmdPlan(args []string) error { return writePlan(os.Stdout, args) }

func writePlan(w io.Writer, args []string) error {
	var asJSON, builtinCost bool
	var cf calibrationFlags
	c, err := parseCommonWith("plan", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print JSON")
		fs.BoolVar(&builtinCost, "builtin-cost", false, "estimate with the built-in constants, not this host's probe or the store's recorded times")
		fs.BoolVar(&cf.recalibrate, "recalibrate", false, "probe this host again, even if its calibration is cached")
		fs.BoolVar(&cf.openblas, "openblas", false, "also measure OpenBLAS's 2-thread sgemm peak (go test over bench/openblas; needs the source tree and libopenblas-dev)")
	})
	if err != nil {
		return err
	}
	if len(c.args) > 0 {
		return fmt.Errorf("plan takes no stage names (got %v); it lists every stage of the profile or sweep: %w", c.args, errUsage)
	}
	r, plan, err := c.setupReadOnly()
	if err != nil {
		return err
	}
	lines, done, err := r.Status(plan)
	if err != nil {
		return err
	}
	dir, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("plan: the working directory, where the commands run: %w", err)
	}
	var hc *hostcal.Result
	if !builtinCost {
		hc = hostCalibration(os.Stderr, cf)
	}
	est, pe := estimatePlan(plan, done, builtinCost, hc)
	out := planOutput{Profile: plan.Profile, Store: r.Store.Root(), Dir: dir, Estimate: pe}
	level := map[string]int{}
	for i, s := range plan.Stages { // inputs come first (pipeline.NewPlan)
		ps := planStage{Name: s.Name, Kind: s.Kind, Inputs: []string{}, Cached: lines[i].Cached}
		for _, in := range s.Inputs {
			ps.Inputs = append(ps.Inputs, in.Stage.Name)
			ps.Level = max(ps.Level, level[in.Stage.Name]+1)
			if done[in.Stage.Name] == nil {
				ps.WaitsFor = append(ps.WaitsFor, in.Stage.Name)
			}
		}
		level[s.Name] = ps.Level
		out.Levels = max(out.Levels, ps.Level+1)
		if k := lines[i].Key; k != "" {
			ps.Key = &k
		}
		ps.Argv = c.runArgv(s.Name, r.Store.Root())
		ps.Command = shellJoin(ps.Argv)
		ps.EstimateSec, ps.EstimateCal = est[i].Seconds, est[i].Calibration
		out.Stages = append(out.Stages, ps)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(w, "profile %s, store %s (--json for the commands)\n", out.Profile, out.Store)
	for l := range out.Levels {
		var names []string
		for _, s := range out.Stages {
			if s.Level == l {
				names = append(names, s.Name)
			}
		}
		fmt.Fprintf(w, "  level %d: %s\n", l, strings.Join(names, " "))
	}
	writeEstimates(w, est, done)
	fmt.Fprintln(w, estimateLine(pe))
	writeHost(w, pe)
	return nil
}

// runArgv is the command that runs one stage with the flags that shaped
// this plan. The store is named explicitly so that a job on another
// machine, or with another environment, uses the same one; --force and
// --debug-key are left out, as forcing in every job would recompute the
// inputs each one shares.
func (c *common) runArgv(stage, store string) []string {
	argv := []string{"routebench", "run", stage}
	if c.sweep != "" {
		argv = append(argv, "--sweep", c.sweep)
		if c.backend != "" {
			argv = append(argv, "--backend", c.backend)
		}
		return append(argv, "--store", store)
	}
	argv = append(argv, "--profile", c.profile)
	if c.config != "" {
		argv = append(argv, "--config", c.config)
	}
	for _, s := range c.set {
		argv = append(argv, "--set", s)
	}
	for _, p := range c.corpus {
		argv = append(argv, "--corpus", p)
	}
	for _, p := range c.evalCorpus {
		argv = append(argv, "--eval-corpus", p)
	}
	if c.backend != "" {
		argv = append(argv, "--backend", c.backend)
	}
	return append(argv, "--store", store)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=,@%+-]+$`)

// shellJoin quotes argv for sh (GNU parallel and Slurm run commands through one).
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if shellSafe.MatchString(a) {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

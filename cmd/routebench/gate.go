package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"routebench/artifacts"
	"routebench/ci"
	"routebench/stages/evaluate"
	"routebench/stages/theory"
)

// baselinePath is where a profile's committed baseline lives.
func baselinePath(profile string) string {
	return filepath.Join(repoRoot(), "ci", "baseline-"+profile+".json")
}

// currentResults collects the cached evaluation ratios and theory verdicts
// of a profile; every stage must be cached (run reproduce first).
func currentResults(c *common) (*ci.Baseline, error) {
	r, plan, err := c.setupReadOnly()
	if err != nil {
		return nil, err
	}
	lines, arts, err := r.Status(plan)
	if err != nil {
		return nil, err
	}
	if err := requireCached(plan, lines, ""); err != nil {
		return nil, err
	}
	evals := map[string]*evaluate.Result{}
	verdicts := map[string]string{}
	for name, a := range arts {
		switch {
		case strings.HasPrefix(name, evaluate.Kind+"/"):
			var res evaluate.Result
			if err := readArtifactJSON(a, evaluate.ResultFile, &res); err != nil {
				return nil, err
			}
			// The baseline holds the held-out split's results of the
			// profile's own seed: not evaluate/<v>@<corpus>, nor
			// evaluate/<v>@seed<N>.
			if name == evaluate.Kind+"/"+res.Variant && res.Corpus == "" {
				evals[res.Variant] = &res
			}
		case name == theory.Kind:
			var sum theory.Summary
			if err := readArtifactJSON(a, theory.SummaryFile, &sum); err != nil {
				return nil, err
			}
			for _, ch := range sum.Checks {
				verdicts[ch.Name] = ch.Verdict
			}
		}
	}
	return ci.Collect(plan.Profile, evals, verdicts), nil
}

func readArtifactJSON(a *artifacts.Artifact, name string, v any) error {
	b, err := a.ReadFile(name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s of stage %s: %w", name, a.Stage, err)
	}
	return nil
}

// gateFlags are the gate's own flags: another baseline file (say, the
// CPU baseline copied to a GPU machine) and another tolerance (to compare
// a run on another backend, whose float32 rounding differs).
type gateFlags struct {
	baseline  string
	tolerance float64
}

// gateResults parses a ci/baseline command line and returns the
// profile's current results and its baseline file's path.
func gateResults(name string, args []string) (*ci.Baseline, string, gateFlags, error) {
	var g gateFlags
	c, err := parseCommonWith(name, args, func(fs *flag.FlagSet) {
		fs.StringVar(&g.baseline, "baseline", "", "baseline file")
		if name == "gate" {
			fs.Float64Var(&g.tolerance, "tolerance", 0, "relative tolerance")
		}
	})
	if err != nil {
		return nil, "", g, err
	}
	if len(c.args) > 0 {
		return nil, "", g, fmt.Errorf("%s takes no stage names (got %q): %w", name, c.args, errUsage)
	}
	if err := c.refuseSweep(name); err != nil {
		return nil, "", g, err
	}
	if g.tolerance < 0 || g.tolerance >= 1 {
		return nil, "", g, fmt.Errorf("%s: --tolerance %g is not a relative tolerance in [0, 1) (0: the baseline's own)", name, g.tolerance)
	}
	cur, err := currentResults(c)
	if err != nil {
		return nil, "", g, err
	}
	path := g.baseline
	if path == "" {
		path = baselinePath(cur.Profile)
	}
	return cur, path, g, nil
}

// cmdGate compares the profile's cached results with its baseline.
func cmdGate(args []string) error {
	cur, path, g, err := gateResults("gate", args)
	if err != nil {
		return err
	}
	base, err := ci.Load(path)
	if err != nil {
		return err
	}
	tol := base.RelTolerance
	if g.tolerance > 0 {
		tol = g.tolerance
	}
	diffs := ci.CompareWithin(base, cur, tol)
	largest := ci.LargestDifference(base, cur)
	if len(diffs) > 0 {
		fmt.Fprintf(os.Stderr, "gate: %d difference(s) from %s (relative tolerance %g):\n", len(diffs), path, tol)
		for _, d := range diffs {
			fmt.Fprintln(os.Stderr, "  "+d)
		}
		fmt.Fprintf(os.Stderr, "gate: largest relative difference %s\n", largest)
		return fmt.Errorf("gate: profile %s differs from its baseline; if the change is intended, run `make baseline` and commit %s", cur.Profile, filepath.Base(path))
	}
	n := 0
	for _, m := range cur.Ratio {
		n += len(m)
	}
	fmt.Fprintf(os.Stderr, "gate: profile %s matches %s (%d ratios, %d theory verdicts, %d claim verdicts, relative tolerance %g; largest relative difference %s)\n",
		cur.Profile, path, n, len(cur.Theory), len(cur.Claims), tol, largest)
	return nil
}

// cmdBaseline writes the profile's current results as its baseline.
func cmdBaseline(args []string) error {
	cur, path, _, err := gateResults("baseline", args)
	if err != nil {
		return err
	}
	if err := cur.Save(path); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "baseline: wrote %s; review and commit it\n", path)
	return nil
}

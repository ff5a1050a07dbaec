package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"routebench/artifacts"
	"routebench/pipeline"
	"routebench/planner"
)

// common holds the flags every command takes.
type common struct {
	profile, config, store, out, backend string
	sweep                                string // a sweep file (--sweep): its plan instead of a profile's
	force                                multiFlag
	set, corpus, evalCorpus              multiFlag // profile overrides, see planner.Overrides
	debugKey                             bool
	fs                                   *flag.FlagSet
	args                                 []string // positional arguments (stage names)
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func parseCommon(name string, args []string) (*common, error) {
	return parseCommonWith(name, args, nil)
}

// parseCommonWith also registers a command's own flags (extra may be nil).
func parseCommonWith(name string, args []string, extra func(*flag.FlagSet)) (*common, error) {
	c := &common{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	if extra != nil {
		extra(c.fs)
	}
	c.fs.SetOutput(io.Discard)
	c.fs.StringVar(&c.profile, "profile", "cpu", "profile")
	c.fs.StringVar(&c.config, "config", "", "profile overrides (JSON)")
	c.fs.Var(&c.set, "set", "profile override key=value; repeatable")
	c.fs.Var(&c.corpus, "corpus", "corpus file, directory or glob; repeatable")
	c.fs.Var(&c.evalCorpus, "eval-corpus", "evaluation corpus: file, directory or glob, or NAME=PATH; repeatable")
	c.fs.StringVar(&c.store, "store", "", "artifact store directory")
	c.fs.StringVar(&c.out, "out", "", "export directory")
	c.fs.StringVar(&c.backend, "backend", "", "training backend")
	c.fs.StringVar(&c.sweep, "sweep", "", "sweep file (JSON)")
	c.fs.Var(&c.force, "force", "rerun stage")
	c.fs.BoolVar(&c.debugKey, "debug-key", false, "print key inputs")
	// Flags may come before, between or after stage names.
	for rest := args; ; {
		if err := c.fs.Parse(rest); err != nil {
			return nil, fmt.Errorf("%s: %v: %w", name, err, errUsage)
		}
		rest = c.fs.Args()
		if len(rest) == 0 {
			break
		}
		c.args, rest = append(c.args, rest[0]), rest[1:]
	}
	return c, nil
}

// repoRoot finds the routebench checkout above the working directory; the
// default store and export paths live there.
func repoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.HasPrefix(string(b), "module routebench\n") {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

func (c *common) storeDir() string {
	if c.store != "" {
		return c.store
	}
	if s := os.Getenv("ROUTEBENCH_STORE"); s != "" {
		return s
	}
	return filepath.Join(repoRoot(), ".routebench", "store")
}

func (c *common) outDir() string {
	if c.out != "" {
		return c.out
	}
	return repoRoot()
}

func (c *common) overrides() planner.Overrides {
	return planner.Overrides{Config: c.config, Set: c.set, Corpus: c.corpus, EvalCorpus: c.evalCorpus}
}

// setup opens the store and builds the profile's (or the sweep's) plan
// and a runner, for a command that may write the store.
func (c *common) setup() (*pipeline.Runner, *pipeline.Plan, error) {
	return c.setupStore(artifacts.Open)
}

// setupReadOnly is setup for a command that only reads the store (plan,
// status, cat, gate, slurm status and cancel): it creates nothing
// in the store, so that on a store a group shares, such a command run
// under any umask leaves no directory the group cannot write
// (docs/cluster.md).
func (c *common) setupReadOnly() (*pipeline.Runner, *pipeline.Plan, error) {
	return c.setupStore(artifacts.OpenReadOnly)
}

func (c *common) setupStore(open func(string) (*artifacts.Store, error)) (*pipeline.Runner, *pipeline.Plan, error) {
	plan, err := c.buildPlan()
	if err != nil {
		return nil, nil, err
	}
	for _, f := range c.force {
		if _, err := plan.Closure(f); err != nil {
			return nil, nil, fmt.Errorf("--force: %w", err)
		}
	}
	store, err := open(c.storeDir())
	if err != nil {
		return nil, nil, err
	}
	store.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	r := &pipeline.Runner{Store: store, Force: map[string]bool{}, Interactive: term.IsTerminal(int(os.Stderr.Fd()))}
	for _, f := range c.force {
		r.Force[f] = true
	}
	if c.debugKey {
		r.DebugKey = os.Stderr
	}
	return r, plan, nil
}

// parseAndSetup is parseCommon followed by setup, for commands that need
// the store and the plan; readOnly opens the store with setupReadOnly.
func parseAndSetup(name string, args []string, readOnly bool) (*common, *pipeline.Runner, *pipeline.Plan, error) {
	c, err := parseCommon(name, args)
	if err != nil {
		return nil, nil, nil, err
	}
	setup := c.setup
	if readOnly {
		setup = c.setupReadOnly
	}
	r, plan, err := setup()
	if err != nil {
		return nil, nil, nil, err
	}
	return c, r, plan, nil
}

func (c *common) buildPlan() (*pipeline.Plan, error) {
	if c.sweep != "" {
		sw, err := c.loadSweep()
		if err != nil {
			return nil, err
		}
		return planner.BuildSweep(sw)
	}
	prof, err := planner.LoadProfileWith(c.profile, c.overrides())
	if err != nil {
		return nil, err
	}
	if c.backend != "" {
		prof.Backend = c.backend
	}
	return planner.Build(prof)
}

// loadSweep reads the --sweep file. The file names the profile and its
// overrides, so the flags that would name them too are refused; --backend
// applies to every point (as the backend field in the file's set would).
func (c *common) loadSweep() (*planner.Sweep, error) {
	var clash []string
	c.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "profile", "config", "set", "corpus":
			clash = append(clash, "--"+f.Name)
		}
	})
	if len(clash) > 0 {
		return nil, fmt.Errorf("--sweep %s: %s cannot be combined with a sweep file, which names the profile and its overrides; put them in its \"profile\", \"config\" or \"set\"", c.sweep, strings.Join(clash, ", "))
	}
	sw, err := planner.LoadSweep(c.sweep)
	if err != nil {
		return nil, err
	}
	if c.backend != "" {
		sw.Set = append(sw.Set, "backend="+c.backend)
	}
	return sw, nil
}

// refuseSweep fails a command that works on a profile only.
func (c *common) refuseSweep(cmd string) error {
	if c.sweep == "" {
		return nil
	}
	return fmt.Errorf("%s works on a profile, not a sweep (--sweep %s): run a sweep with `routebench sweep --file %s`, its stages with `routebench run STAGE --sweep %s`", cmd, c.sweep, c.sweep, c.sweep)
}

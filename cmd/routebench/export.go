package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"routebench/artifacts"
	"routebench/interop/export"
	"routebench/modelspec"
	"routebench/modelspec/weights"
	"routebench/pipeline"
	"routebench/stages/tokenize/shards"
	"routebench/stages/train"
)

// exportOptions are export's own flags.
type exportOptions struct {
	windows, windowLen int
	seed               uint64
	force              bool
}

const exportUsage = `usage: routebench export STAGE... [flags]

Writes cached train stages (train/rope, several, or the kind "train" for all
of the profile's) as directories PyTorch loads without routebench's code:
<out>/<stage>/model.safetensors (state_dict names and layouts of
interop/torch/model.py), config.json (model_type, tokenizer, every
architectural fact) and reference.safetensors (held-out windows and the
native evaluator's log-probs on them). It reads the store only and never
trains: a stage that is not cached is an error that says what to run.
Each directory is written whole, then renamed into place; an export of
other weights is replaced only with --force. docs/interop.md has the files.

flags:
`

// cmdExport writes cached train stages' exports (package interop/export,
// docs/interop.md), each into <out>/<stage name>.
func cmdExport(ctx context.Context, args []string) error {
	var o exportOptions
	c, err := parseExportFlags(args, &o)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Print(exportUsage)
		c.fs.SetOutput(os.Stdout)
		c.fs.PrintDefaults()
		return nil
	}
	if err != nil {
		return err
	}
	if len(c.args) == 0 {
		return fmt.Errorf("export takes train stage names (train/rope) or the kind %q for all of them (routebench export --help): %w", train.Kind, errUsage)
	}
	if o.windows < 0 || o.windowLen < 0 {
		return fmt.Errorf("export: --windows %d and --window-len %d must not be negative: %w", o.windows, o.windowLen, errUsage)
	}
	plan, err := c.buildPlan()
	if err != nil {
		return err
	}
	// Export only reads the store: a read-only store serves, and a path
	// that holds no store is an error (an empty store there would only say
	// "not cached" about every stage).
	store, err := artifacts.OpenExisting(c.storeDir())
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	store.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	r := &pipeline.Runner{Store: store}
	sub, err := plan.Closure(c.args...)
	if err != nil {
		return err
	}
	var stages []*pipeline.Stage
	for _, s := range sub.Stages {
		for _, n := range c.args {
			if (s.Name == n || s.Kind == n) && s.Kind != train.Kind {
				return fmt.Errorf("export: %s is a %s stage; only train stages hold weights (name train/<variant> or %q)", s.Name, s.Kind, train.Kind)
			}
		}
		if s.Kind == train.Kind {
			stages = append(stages, s)
		}
	}
	lines, arts, err := r.Status(sub)
	if err != nil {
		return err
	}
	out := c.out
	if out == "" {
		out = filepath.Join(".routebench", "export", plan.Profile)
	}
	for _, s := range stages {
		art, ok := arts[s.Name]
		if !ok {
			return fmt.Errorf("export: stage %s of profile %s is not cached (%s): run `routebench run %s --profile %s` with the same --config and --set first",
				s.Name, plan.Profile, reasonOf(lines, s.Name), s.Name, plan.Profile)
		}
		dir := filepath.Join(out, filepath.FromSlash(s.Name))
		res, err := exportStage(ctx, dir, s, art, arts, o)
		if err != nil {
			return err
		}
		how := ""
		switch {
		case res.ReplacedOther:
			how = " (replaced an export of other weights: --force)"
		case res.Replaced:
			how = " (replaced an export of the same weights)"
		}
		fmt.Printf("export: %s -> %s, weights_sha256 %.12s%s\n", s.Name, dir, res.WeightsSHA256, how)
	}
	return nil
}

// parseExportFlags parses export's flags: the ones that choose the plan
// and the store (as every command's), where to write, and export's own.
// Flags may come before, between or after stage names.
func parseExportFlags(args []string, o *exportOptions) (*common, error) {
	c := &common{fs: flag.NewFlagSet("export", flag.ContinueOnError)}
	fs := c.fs
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.profile, "profile", "cpu", "the profile whose train stages to export (smoke, cpu, paper)")
	fs.StringVar(&c.config, "config", "", "profile overrides (JSON), as the run that trained the stages had them")
	fs.Var(&c.set, "set", "profile override key=value, as the run had it; repeatable")
	fs.Var(&c.corpus, "corpus", "corpus file, directory or glob the run trained on; repeatable")
	fs.StringVar(&c.backend, "backend", "", "training backend the run used")
	fs.StringVar(&c.store, "store", "", "the artifact store to read (default $ROUTEBENCH_STORE, else .routebench/store); it must exist and may be read-only")
	fs.StringVar(&c.out, "out", "", "where to write <out>/<stage> (default .routebench/export/<profile>)")
	fs.IntVar(&o.windows, "windows", 1, "held-out windows in reference.safetensors, scored by the native evaluator; 0: no reference file")
	fs.IntVar(&o.windowLen, "window-len", 0, "tokens per reference window (default: the training context T)")
	fs.Uint64Var(&o.seed, "seed", 7, "seed that draws the reference windows (7: the evaluate stage's)")
	fs.BoolVar(&o.force, "force", false, "replace an export of other weights at <out>/<stage> (an export of the same weights is always replaced)")
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return c, err
			}
			return nil, fmt.Errorf("export: %v (routebench export --help lists the flags): %w", strings.TrimSpace(err.Error()), errUsage)
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		c.args, rest = append(c.args, rest[0]), rest[1:]
	}
	return c, nil
}

func reasonOf(lines []pipeline.StatusLine, stage string) string {
	for _, l := range lines {
		if l.Stage == stage {
			return l.Reason
		}
	}
	return "not in the store"
}

func exportStage(ctx context.Context, dir string, s *pipeline.Stage, art *artifacts.Artifact, arts map[string]*artifacts.Artifact, o exportOptions) (export.Result, error) {
	fail := func(err error) (export.Result, error) {
		return export.Result{}, fmt.Errorf("export %s: %w", s.Name, err)
	}
	wp, err := art.Path(modelspec.WeightsFile)
	if err != nil {
		return fail(err)
	}
	set, err := weights.ReadFile(wp)
	if err != nil {
		return fail(err)
	}
	src := export.Source{Stage: s.Name, Digest: art.Digest()}
	tj, err := art.ReadFile(modelspec.ReportFile)
	if err != nil {
		return fail(err)
	}
	var rep modelspec.TrainReport
	if err := json.Unmarshal(tj, &rep); err != nil {
		return fail(fmt.Errorf("reading %s: %w", modelspec.ReportFile, err))
	}
	src.Train = rep.Config
	// The tokenize stage the model trained on names its tokenizer (and
	// holds the held-out windows of the reference).
	var tok *pipeline.Stage
	for _, in := range s.Inputs {
		if in.Name == shards.Input {
			tok = in.Stage
		}
	}
	if tok == nil || arts[tok.Name] == nil {
		return fail(fmt.Errorf("its tokenize input is not cached, so its tokenizer cannot be named: run `routebench run %s` first", s.Name))
	}
	ds, err := openShards(arts[tok.Name])
	if err != nil {
		return fail(err)
	}
	defer ds.Close()
	tz, err := export.TokenizerOf(ds.Info())
	if err != nil {
		return fail(fmt.Errorf("%s: %w", tok.Name, err))
	}
	opts := export.Options{Tokenizer: tz, Force: o.force}
	if o.windows > 0 {
		L := o.windowLen
		if L == 0 {
			L = set.Arch.Context
		}
		opts.Reference = &export.ReferenceSpec{Data: ds, Seed: o.seed, Windows: o.windows, Len: L}
	}
	return export.Write(ctx, dir, set, src, opts)
}

// openShards opens a cached tokenize artifact as shards.OpenInput does for
// a running stage: every file but the runner's own.
func openShards(art *artifacts.Artifact) (*shards.Dataset, error) {
	var paths []string
	for _, name := range art.Names() {
		if name == pipeline.RunInfoFile {
			continue
		}
		p, err := art.Path(name)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return shards.Open(paths)
}

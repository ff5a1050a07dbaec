package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"

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
}

// cmdExport writes cached train stages' weights as safetensors with a
// config.json (package interop/export, docs/interop.md), each into
// <out>/<stage name>, and with --windows N also N held-out windows and the
// native evaluator's log-probs on them (reference.safetensors). It reads the
// store only: a stage that is not cached is an error, never a training run.
func cmdExport(ctx context.Context, args []string) error {
	var o exportOptions
	c, err := parseCommonWith("export", args, func(fs *flag.FlagSet) {
		fs.IntVar(&o.windows, "windows", 0, "also write this many held-out windows and their native log-probs")
		fs.IntVar(&o.windowLen, "window-len", 0, "tokens per reference window (default: the training context T)")
		fs.Uint64Var(&o.seed, "seed", 7, "seed that draws the reference windows")
	})
	if err != nil {
		return err
	}
	if len(c.args) == 0 {
		return fmt.Errorf("export takes train stage names (train/rope) or the kind %q for all of them: %w", train.Kind, errUsage)
	}
	if o.windows < 0 || o.windowLen < 0 {
		return fmt.Errorf("export: --windows %d and --window-len %d must not be negative: %w", o.windows, o.windowLen, errUsage)
	}
	r, plan, err := c.setup()
	if err != nil {
		return err
	}
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
		if err := exportStage(ctx, dir, s, art, arts, o); err != nil {
			return err
		}
		fmt.Printf("export: %s -> %s\n", s.Name, dir)
	}
	return nil
}

func reasonOf(lines []pipeline.StatusLine, stage string) string {
	for _, l := range lines {
		if l.Stage == stage {
			return l.Reason
		}
	}
	return "not in the store"
}

func exportStage(ctx context.Context, dir string, s *pipeline.Stage, art *artifacts.Artifact, arts map[string]*artifacts.Artifact, o exportOptions) error {
	wp, err := art.Path(modelspec.WeightsFile)
	if err != nil {
		return fmt.Errorf("export %s: %w", s.Name, err)
	}
	set, err := weights.ReadFile(wp)
	if err != nil {
		return fmt.Errorf("export %s: %w", s.Name, err)
	}
	src := export.Source{Stage: s.Name, Digest: art.Digest()}
	tj, err := art.ReadFile(modelspec.ReportFile)
	if err != nil {
		return fmt.Errorf("export %s: %w", s.Name, err)
	}
	var rep modelspec.TrainReport
	if err := json.Unmarshal(tj, &rep); err != nil {
		return fmt.Errorf("export %s: reading %s: %w", s.Name, modelspec.ReportFile, err)
	}
	src.Train = rep.Config
	if err := export.Write(dir, set, src); err != nil {
		return err
	}
	if o.windows == 0 {
		return nil
	}
	L := o.windowLen
	if L == 0 {
		L = set.Arch.Context
	}
	var tok *pipeline.Stage
	for _, in := range s.Inputs {
		if in.Name == shards.Input {
			tok = in.Stage
		}
	}
	if tok == nil || arts[tok.Name] == nil {
		return fmt.Errorf("export %s: its tokenize input is not cached, so there are no held-out windows to score: run `routebench run %s` first", s.Name, s.Name)
	}
	ds, err := openShards(arts[tok.Name])
	if err != nil {
		return fmt.Errorf("export %s: %w", s.Name, err)
	}
	defer ds.Close()
	return export.Reference(ctx, dir, set, ds, o.seed, o.windows, L)
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

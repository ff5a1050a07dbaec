// Package study is the pipeline stage that writes a sweep's study,
// STUDY-<name>.md with its plots: how the perplexity ratios at 16T and at
// the longest length move along each axis of the sweep, per variant, over
// training seeds. It reads only the train and evaluate artifacts of the
// sweep's points (stages.BuildSweep names them), and never writes
// RESULTS.md, which is the report stage's.
package study

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"routebench/modelspec"
	"routebench/pipeline"
	"routebench/stages/evaluate"
	"routebench/stages/report"
)

// Kind is the stage kind and name.
const Kind = "study"

// File is the study's markdown file of a sweep.
func File(name string) string { return "STUDY-" + name + ".md" }

// plotDir holds a study's plots, beside the report's results/.
func plotDir(name string) string { return "results/study-" + name }

// Config is the sweep as the study needs it: what it varied and where
// each trained model's artifacts are.
type Config struct {
	Name    string          `json:"name"`
	Profile string          `json:"profile"`          // the base profile
	Config  json.RawMessage `json:"config,omitempty"` // the sweep's overrides, as given
	Set     []string        `json:"set,omitempty"`
	Axes    []Axis          `json:"axes"`
	Points  []Point         `json:"points"` // the cartesian product, first axis slowest
	Seeds   []uint64        `json:"seeds"`  // the training seeds every point has
	// Commit is the source revision (git describe), the tidy tables'
	// commit line (report.WriteTidyTables), as report.Config's.
	Commit string `json:"commit,omitempty"`
}

// Axis is one axis of the sweep.
type Axis struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`         // as JSON text, in the sweep's order
	With   []string `json:"with,omitempty"` // keys set along with Key
}

// Point is one point of the sweep: one value of each axis.
type Point struct {
	Label  string `json:"label"`  // "sigma_min=0.2,steps=400"
	Values []int  `json:"values"` // the index of its value on each axis
	Runs   []Run  `json:"runs"`
}

// Run is one trained model of a point: a variant at a seed.
type Run struct {
	Variant string `json:"variant"`
	Seed    uint64 `json:"seed"`
	// Train and Evaluate are the study's input names for its stages.
	Train    string `json:"train"`
	Evaluate string `json:"evaluate"`
}

// Inputs are the stages behind each Run's input names.
type Inputs map[string]*pipeline.Stage

// Stage returns the study stage of a sweep.
func Stage(cfg Config, in Inputs) (*pipeline.Stage, error) {
	var inputs []pipeline.Input
	for _, p := range cfg.Points {
		for _, r := range p.Runs {
			for _, name := range []string{r.Train, r.Evaluate} {
				s, ok := in[name]
				if !ok {
					return nil, fmt.Errorf("study %s: point %s has no stage for input %s", cfg.Name, p.Label, name)
				}
				inputs = append(inputs, pipeline.Input{Name: name, Stage: s})
			}
		}
	}
	return &pipeline.Stage{
		Name: Kind, Kind: Kind, Config: cfg, Inputs: inputs,
		Code: []string{"routebench/stages/study"},
		// The markdown quotes wall times; the plots are deterministic.
		Volatile: []string{File(cfg.Name)},
		Run:      func(rc *pipeline.RunContext) error { return run(rc, cfg) },
	}, nil
}

// runData is one trained model's artifacts.
type runData struct {
	Run
	train    *modelspec.TrainReport
	eval     *evaluate.Result
	wallSecs float64 // train and evaluate, as recorded when they last ran
}

func readJSON(rc *pipeline.RunContext, input, file string, v any) error {
	art, err := rc.Input(input)
	if err != nil {
		return err
	}
	b, err := art.ReadFile(file)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("study: %s of %s: %w", file, input, err)
	}
	return nil
}

// load reads every point's runs, in the config's order.
func load(rc *pipeline.RunContext, cfg Config) ([][]runData, error) {
	out := make([][]runData, len(cfg.Points))
	for i, p := range cfg.Points {
		for _, r := range p.Runs {
			d := runData{Run: r, train: new(modelspec.TrainReport), eval: new(evaluate.Result)}
			if err := readJSON(rc, r.Train, modelspec.ReportFile, d.train); err != nil {
				return nil, err
			}
			if err := readJSON(rc, r.Evaluate, evaluate.ResultFile, d.eval); err != nil {
				return nil, err
			}
			for _, in := range []string{r.Train, r.Evaluate} {
				var ri pipeline.RunInfo
				if readJSON(rc, in, pipeline.RunInfoFile, &ri) == nil {
					d.wallSecs += ri.WallSec
				}
			}
			out[i] = append(out[i], d)
		}
	}
	return out, nil
}

func run(rc *pipeline.RunContext, cfg Config) error {
	data, err := load(rc, cfg)
	if err != nil {
		return err
	}
	pts, err := summarize(cfg, data)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(rc.OutDir, plotDir(cfg.Name)), 0o755); err != nil {
		return err
	}
	plots, err := writePlots(rc.OutDir, cfg, pts)
	if err != nil {
		return err
	}
	if err := report.WriteTidyTables(filepath.Join(rc.OutDir, plotDir(cfg.Name)), tidySet(cfg, data)); err != nil {
		return fmt.Errorf("study %s: %w", cfg.Name, err)
	}
	md := render(cfg, pts, plots)
	return os.WriteFile(filepath.Join(rc.OutDir, File(cfg.Name)), []byte(md), 0o644)
}

// tidySet is every run of every point for the tidy tables, each labelled
// with its point (results/study-<name>/tidy.parquet, train_curves.parquet).
func tidySet(cfg Config, data [][]runData) report.TidySet {
	set := report.TidySet{Commit: cfg.Commit, Sweep: true}
	for i, p := range cfg.Points {
		for _, d := range data[i] {
			set.Runs = append(set.Runs, report.TidyRun{Point: p.Label, Variant: d.Variant, Seed: d.Seed, Train: d.train, Eval: d.eval})
		}
	}
	return set
}

// Package report is the pipeline stage that writes RESULTS.md, its plots
// and the machine-readable tables, from the artifacts of the other stages
// only. Nothing in RESULTS.md is typed by hand: every figure is read from an
// input artifact, and the paper's figures are constants in claims.go.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"routebench/modelspec"
	"routebench/pipeline"
	"routebench/stages/evaluate"
)

// Kind and name of the stage.
const (
	Kind        = "report"
	ResultsFile = "RESULTS.md"
)

// Config is what the report needs besides its inputs.
type Config struct {
	Profile  string   `json:"profile"`
	Variants []string `json:"variants"`
	// Seeds are the training seeds when the profile trains each variant
	// more than once (its seeds field), DefaultSeed its train.seed; each
	// run's inputs are named by SeedSuffix. Empty: one run per variant,
	// named by the variant alone (and the config unchanged).
	Seeds       []uint64 `json:"seeds,omitempty"`
	DefaultSeed uint64   `json:"default_seed,omitempty"`
	// TrainSeed is train.seed, the one seed of a one-seed profile: the v3
	// claims label a run on a seed used for design choices exploratory.
	TrainSeed uint64 `json:"train_seed,omitempty"`
	// SeedVariants are the variants trained at every seed when the profile
	// trains the others once, at the first seed (planner.Profile's field);
	// empty: every variant at every seed. The report reads the runs that
	// exist, and RESULTS.md says which variants have how many seeds.
	SeedVariants []string `json:"seed_variants,omitempty"`
	// Commit is the source revision the report describes (git describe of
	// the checkout, or "unknown"); it only labels the header.
	Commit string `json:"commit"`
	// EvalCorpora name the evaluation corpora, in the order reported.
	EvalCorpora []string `json:"eval_corpora,omitempty"`
}

// Inputs are the stages the report reads.
type Inputs struct {
	Train, Evaluate     map[string]*pipeline.Stage // by run name (RunName)
	Theory, KernelSpeed *pipeline.Stage            // may be nil
	StepSpeed           *pipeline.Stage            // may be nil
	EvalCorpora         []EvalCorpus               // in Config.EvalCorpora's order
}

// EvalCorpus is an evaluation corpus's evaluate stages, by run name (RunName).
type EvalCorpus struct {
	Name     string
	Evaluate map[string]*pipeline.Stage
}

// runID is one trained model: a variant at a seed.
type runID struct {
	variant string
	seed    uint64 // 0 when the config names no seeds (one run, the profile's seed)
	name    string // RunName
}

// RunName names a variant's run at a seed: the variant, suffixed as
// SeedSuffix says. The report's inputs are keyed by it.
func RunName(variant string, seed, defaultSeed uint64) string {
	return variant + SeedSuffix(seed, defaultSeed)
}

// runs lists the runs the report reads, variant by variant, each
// variant's seeds in the config's order.
func (c Config) runs() []runID {
	var out []runID
	for _, v := range c.Variants {
		if len(c.Seeds) == 0 {
			out = append(out, runID{variant: v, name: v})
			continue
		}
		for _, s := range c.Seeds {
			out = append(out, runID{variant: v, seed: s, name: RunName(v, s, c.DefaultSeed)})
		}
	}
	return out
}

// trainedVariant is the registry variant a report variant's weights are:
// the variant, or for RoPE extended at inference (rope+yarn, rope+pi,
// rope+ntk: evaluate.Config.RunVariant) the part before the "+".
func trainedVariant(v string) string {
	base, _, _ := strings.Cut(v, "+")
	return base
}

func trainInput(v string) string { return "train-" + v }
func evalInput(v string) string  { return "evaluate-" + v }

// corpusEvalInput names variant v's evaluation on corpus c.
func corpusEvalInput(v, c string) string { return "evaluate-" + v + "@" + c }

const (
	theoryInput      = "theory"
	kernelSpeedInput = "kernelspeed"
	stepSpeedInput   = "stepspeed"
)

// Stage returns the report stage.
func Stage(cfg Config, in Inputs) *pipeline.Stage {
	var inputs []pipeline.Input
	for _, r := range cfg.runs() {
		if s := in.Train[r.name]; s != nil {
			inputs = append(inputs, pipeline.Input{Name: trainInput(r.name), Stage: s})
		}
		if s := in.Evaluate[r.name]; s != nil {
			inputs = append(inputs, pipeline.Input{Name: evalInput(r.name), Stage: s})
		}
		for _, c := range in.EvalCorpora {
			if s := c.Evaluate[r.name]; s != nil {
				inputs = append(inputs, pipeline.Input{Name: corpusEvalInput(r.name, c.Name), Stage: s})
			}
		}
	}
	if in.Theory != nil {
		inputs = append(inputs, pipeline.Input{Name: theoryInput, Stage: in.Theory})
	}
	if in.KernelSpeed != nil {
		inputs = append(inputs, pipeline.Input{Name: kernelSpeedInput, Stage: in.KernelSpeed})
	}
	if in.StepSpeed != nil {
		inputs = append(inputs, pipeline.Input{Name: stepSpeedInput, Stage: in.StepSpeed})
	}
	return &pipeline.Stage{
		Name: Kind, Kind: Kind, Config: cfg, Inputs: inputs,
		Code: []string{"routebench/stages/report"},
		// RESULTS.md quotes measurements (wall times, throughput) that
		// differ run to run; the tables, CSV, Arrow file and plots are
		// deterministic and verified.
		Volatile: []string{ResultsFile},
		Run:      func(rc *pipeline.RunContext) error { return run(rc, cfg) },
	}
}

// variantData is what the report knows of one run (a variant at a seed),
// or of a variant's runs combined over seeds (CombineSeeds: eval only);
// nil where the plan has no such input.
type variantData struct {
	name       string // the run's name (RunName), or the variant's when combined
	variant    string
	seed       uint64 // the training seed (0 if unknown: no train input)
	train      *modelspec.TrainReport
	eval       *evaluate.Result
	trainSpeed map[string]float64
	angleShift *angleShift                 // learned variants: the trained table against its initial one
	angleProj  *angleProjSize              // learned-proj-qkv: the size of its trained angle projections
	corpora    map[string]*evaluate.Result // by evaluation corpus name
}

// readJSONFile decodes a file of a named input. It returns false when the
// plan has no such input.
func readJSONFile(rc *pipeline.RunContext, input, file string, v any) (bool, error) {
	art, ok := rc.Inputs[input]
	if !ok {
		return false, nil
	}
	b, err := art.ReadFile(file)
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("report: %s of %s: %w", file, input, err)
	}
	return true, nil
}

// readOptional is readJSONFile into a new value, nil when the input is absent.
func readOptional[T any](rc *pipeline.RunContext, input, file string) (*T, error) {
	v := new(T)
	ok, err := readJSONFile(rc, input, file, v)
	if err != nil || !ok {
		return nil, err
	}
	return v, nil
}

// load reads every run.
func load(rc *pipeline.RunContext, cfg Config) ([]*variantData, error) {
	var vs []*variantData
	for _, r := range cfg.runs() {
		name := r.name
		v := &variantData{name: name, variant: r.variant, seed: r.seed}
		var err error
		if v.train, err = readOptional[modelspec.TrainReport](rc, trainInput(name), modelspec.ReportFile); err != nil {
			return nil, err
		}
		if v.eval, err = readOptional[evaluate.Result](rc, evalInput(name), evaluate.ResultFile); err != nil {
			return nil, err
		}
		if v.angleShift, err = learnedShift(rc, trainedVariant(r.variant), name, v.train); err != nil {
			return nil, err
		}
		if v.angleProj, err = learnedProjection(rc, trainedVariant(r.variant), name, v.train); err != nil {
			return nil, err
		}
		v.corpora = map[string]*evaluate.Result{}
		for _, c := range cfg.EvalCorpora {
			if v.corpora[c], err = readOptional[evaluate.Result](rc, corpusEvalInput(name, c), evaluate.ResultFile); err != nil {
				return nil, err
			}
		}
		if v.train != nil {
			v.seed = v.train.Config.Seed
		}
		// Speed figures are volatile and only decorate the training table.
		readJSONFile(rc, trainInput(name), modelspec.SpeedFile, &v.trainSpeed)
		vs = append(vs, v)
	}
	return vs, nil
}

func run(rc *pipeline.RunContext, cfg Config) error {
	vs, err := load(rc, cfg)
	if err != nil {
		return err
	}
	seeds, err := groupSeeds(cfg, vs)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(rc.OutDir, "results"), 0o755); err != nil {
		return err
	}
	rs := rows(vs)
	for _, step := range []struct {
		what string
		fn   func() error
	}{
		{PlotRatio, func() error { return ratioPlot(seeds.combined, filepath.Join(rc.OutDir, PlotRatio)) }},
		{PlotFar, func() error { return farPlot(vs, filepath.Join(rc.OutDir, PlotFar)) }},
		{PlotTrain, func() error { return trainPlot(vs, filepath.Join(rc.OutDir, PlotTrain)) }},
		{"the position curves", func() error { return positionPlots(vs, rc.OutDir) }},
		{PlotContextGain, func() error { return contextGainPlot(vs, filepath.Join(rc.OutDir, PlotContextGain)) }},
		{PlotCopyProbe, func() error { return copyProbePlot(vs, filepath.Join(rc.OutDir, PlotCopyProbe)) }},
		{"the mechanism plots", func() error { return mechanismPlots(vs, rc.OutDir) }},
		{CSVFile, func() error { return writeCSV(filepath.Join(rc.OutDir, CSVFile), rs) }},
		{ArrowFile, func() error { return writeArrow(filepath.Join(rc.OutDir, ArrowFile), rs) }},
		{"the tidy tables", func() error { return WriteTidyTables(filepath.Join(rc.OutDir, "results"), tidySet(cfg, vs)) }},
	} {
		if err := step.fn(); err != nil {
			return fmt.Errorf("report: %s: %w", step.what, err)
		}
	}
	theory, err := copyTheory(rc)
	if err != nil {
		return err
	}
	bench, err := readMarkdown(rc, kernelSpeedInput, KernelSpeedMarkdown)
	if err != nil {
		return err
	}
	steps, err := readMarkdown(rc, stepSpeedInput, StepSpeedMarkdown)
	if err != nil {
		return err
	}
	md, err := render(rc, cfg, vs, seeds, theory, bench, steps)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(rc.OutDir, ResultsFile), []byte(md), 0o644)
}

// seedGroups are the runs arranged for the report: combined holds one
// entry per variant (its run, or with several seeds their CombineSeeds),
// perSeed the evaluations of seed i by variant (for the claims).
type seedGroups struct {
	seeds    []uint64 // nil: one seed
	combined []*variantData
	perSeed  []map[string]*evaluate.Result
	claims   []Claim // ClaimsOverSeeds
	v3       []Claim // ClaimsV3
	v3dec    []V3
	v4m      []Claim // ClaimsV4M, the mechanism claims
	v4mdec   []V3
	v4m2     []Claim // ClaimsV4M2, the mechanism claims that replace v4m's
	v4m2dec  []V3
	// corpusClaims are the claims judged on each evaluation corpus's
	// results (ClaimsOverSeeds), in Config.EvalCorpora's order.
	corpusClaims []corpusClaims
}

type corpusClaims struct {
	corpus string
	claims []Claim
}

// trainingSeeds are the seeds the runs were trained at.
func (c Config) trainingSeeds() []uint64 {
	if len(c.Seeds) > 0 {
		return c.Seeds
	}
	return []uint64{c.TrainSeed}
}

func groupSeeds(cfg Config, vs []*variantData) (seedGroups, error) {
	g := seedGroups{seeds: cfg.Seeds}
	n := max(1, len(cfg.Seeds))
	g.perSeed = make([]map[string]*evaluate.Result, n)
	for i := range g.perSeed {
		g.perSeed[i] = map[string]*evaluate.Result{}
	}
	for k := 0; k < len(vs); k += n {
		runs := vs[k : k+n] // runs() lists a variant's seeds together
		var evs []*evaluate.Result
		for i, r := range runs {
			if r.eval != nil {
				evs = append(evs, r.eval)
				g.perSeed[i][r.variant] = r.eval
			}
		}
		if n == 1 {
			g.combined = append(g.combined, runs[0])
			continue
		}
		c := &variantData{name: runs[0].variant, variant: runs[0].variant}
		if len(evs) > 0 { // a variant trained at fewer seeds (seed_variants) combines the ones it has
			var err error
			if c.eval, err = CombineSeeds(evs); err != nil {
				return seedGroups{}, err
			}
		}
		g.combined = append(g.combined, c)
	}
	var err error
	if g.claims, err = ClaimsOverSeeds(g.perSeed, g.seeds); err != nil {
		return g, err
	}
	g.v3, g.v3dec = ClaimsV3(g.perSeed, cfg.trainingSeeds())
	g.v4m, g.v4mdec = ClaimsV4M(g.perSeed, cfg.trainingSeeds())
	g.v4m2, g.v4m2dec = ClaimsV4M2(g.perSeed, cfg.trainingSeeds())
	for _, c := range cfg.EvalCorpora {
		per := make([]map[string]*evaluate.Result, n)
		for i := range per {
			per[i] = map[string]*evaluate.Result{}
		}
		for k := 0; k < len(vs); k += n {
			for i, r := range vs[k : k+n] {
				if e := r.corpora[c]; e != nil {
					per[i][r.variant] = e
				}
			}
		}
		cc, err := ClaimsOverSeeds(per, g.seeds)
		if err != nil {
			return g, fmt.Errorf("report: the claims on evaluation corpus %s: %w", c, err)
		}
		g.corpusClaims = append(g.corpusClaims, corpusClaims{corpus: c, claims: cc})
	}
	return g, nil
}

package planner

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"routebench/modelspec"
	"routebench/pipeline"
	"routebench/stages/evaluate"
	"routebench/stages/kernelspeed"
	"routebench/stages/report"
	"routebench/stages/stepspeed"
	"routebench/stages/theory"
	"routebench/stages/tokenize"
	"routebench/stages/train"
)

// ReportStage is the name of the stage whose artifact holds RESULTS.md.
const ReportStage = report.Kind

// ResultsFile is the report's markdown file, RESULTS.md.
const ResultsFile = report.ResultsFile

// trainConfig is the training config of variant v at seed in profile p:
// the plan's train stages and the benchmarks' shapes (TrainConfig) both come
// from it.
func trainConfig(p Profile, v string, vocab int, seed uint64) modelspec.Config {
	cfg := p.Train
	cfg.Variant, cfg.Profile, cfg.Vocab, cfg.Backend, cfg.Seed = v, p.Name, vocab, backendOf(p), seed
	cfg.Warmup = min(cfg.Warmup, cfg.Steps)
	if cfg.Trainer == "" {
		cfg.Trainer = trainerFor(cfg.Backend, v)
	}
	return cfg.Normalized() // what train.Stage hashes; stepspeed times the same config
}

// TrainConfig is the config a built-in profile trains variant with at its
// default seed: the one source of a profile's shape for tests and
// benchmarks, which must not copy it.
func TrainConfig(profile, variant string) (modelspec.Config, error) {
	p, err := LoadProfile(profile, "")
	if err != nil {
		return modelspec.Config{}, err
	}
	cfg := trainConfig(p, variant, vocabOf(p.Tokenizer), p.Train.Seed)
	if err := cfg.Validate(); err != nil {
		return modelspec.Config{}, fmt.Errorf("profile %s: %w", profile, err)
	}
	return cfg, nil
}

// vocabOf is the vocabulary size of a tokenizer (ids + end-of-document).
func vocabOf(tok string) int {
	if tok == "gpt2" {
		return 50257
	}
	return 257
}

// Build assembles the plan of a profile:
//
//	tokenize -> train/<v> -> evaluate/<v> -> report
//	theory, bench, stepspeed ------------->
//
// With seeds, each variant has a train and an evaluate stage per seed
// (train/<v>@seed<N>, the profile's train.seed unsuffixed).
func Build(p Profile) (*pipeline.Plan, error) {
	plan, _, err := build(p)
	return plan, err
}

// runStages are the stages of one trained model in a plan: a variant at a
// seed, its train and evaluate stages.
type runStages struct {
	variant     string
	seed        uint64
	name        string // report.RunName
	train, eval *pipeline.Stage
}

// build is Build, also returning each trained model's stages (a sweep
// collects them by point).
func build(p Profile) (*pipeline.Plan, []runStages, error) {
	if err := p.validate(); err != nil {
		return nil, nil, err
	}
	variants := p.Variants
	if len(variants) == 0 {
		variants = modelspec.DefaultVariants()
	}
	vocab := vocabOf(p.Tokenizer)
	tok, err := tokenizeStage(p)
	if err != nil {
		return nil, nil, err
	}
	all := []*pipeline.Stage{tok}
	in := report.Inputs{Train: map[string]*pipeline.Stage{}, Evaluate: map[string]*pipeline.Stage{}}
	corpora, err := evalCorpora(p)
	if err != nil {
		return nil, nil, err
	}
	evalToks := make([]*pipeline.Stage, len(corpora))
	for i, c := range corpora {
		if evalToks[i], err = evalTokenizeStage(p, c); err != nil {
			return nil, nil, err
		}
		all = append(all, evalToks[i])
		in.EvalCorpora = append(in.EvalCorpora, report.EvalCorpus{Name: c.Name, Evaluate: map[string]*pipeline.Stage{}})
	}
	label, err := commit()
	if err != nil {
		return nil, nil, fmt.Errorf("profile %s: %w", p.Name, err)
	}
	rep := report.Config{Profile: p.Name, Variants: variants, Commit: label, SeedVariants: p.SeedVariants}
	for _, c := range corpora {
		rep.EvalCorpora = append(rep.EvalCorpora, c.Name)
	}
	rep.TrainSeed = p.Train.Seed
	seeds := []uint64{p.Train.Seed}
	if len(p.Seeds) > 0 && !slices.Equal(p.Seeds, seeds) {
		seeds = p.Seeds
		rep.Seeds, rep.DefaultSeed = p.Seeds, p.Train.Seed
	}
	var runs []runStages
	var timed []modelspec.Config // stepspeed: each variant at the profile's seed
	for _, v := range variants {
		for _, seed := range seeds {
			if !p.trainsAt(v, seed, seeds[0]) {
				continue
			}
			cfg := trainConfig(p, v, vocab, seed)
			if err := cfg.Validate(); err != nil {
				return nil, nil, fmt.Errorf("profile %s: %w", p.Name, err)
			}
			if seed == seeds[0] {
				timed = append(timed, cfg)
			}
			evCfg := evaluate.NewConfig(v, p.Name, cfg.Context, p.LengthMultipliers, p.Windows, p.EvalSeed)
			evCfg.Protocols = p.EvalProtocols
			evCfg.Design = p.WindowDesign
			evCfg.CopyProbe = p.CopyProbe
			if err := evCfg.Validate(); err != nil {
				return nil, nil, fmt.Errorf("profile %s: %w", p.Name, err)
			}
			// The evaluation windows are the profile's (eval_seed), the
			// same for every seed: the seeds differ by training alone.
			tr := train.Stage(cfg, tok)
			ev := evaluate.Stage(evCfg, tok, tr)
			suffix := report.SeedSuffix(seed, p.Train.Seed)
			tr.Name, ev.Name = tr.Name+suffix, ev.Name+suffix
			run := report.RunName(v, seed, p.Train.Seed)
			in.Train[run], in.Evaluate[run] = tr, ev
			all = append(all, tr, ev)
			runs = append(runs, runStages{variant: v, seed: seed, name: run, train: tr, eval: ev})
			// The same trained weights on each evaluation corpus: its own
			// shards, the same protocol (evaluate/<v>@seed<N>@<corpus> at
			// another seed).
			for i, c := range corpora {
				cc := evCfg
				cc.Corpus = c.Name
				ce := evaluate.Stage(cc, evalToks[i], tr)
				ce.Name = evaluate.Kind + "/" + run + "@" + c.Name
				in.EvalCorpora[i].Evaluate[run] = ce
				all = append(all, ce)
			}
		}
	}
	ext, extVariants, err := extensionStages(p, runs, tok, seeds[0])
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ext {
		in.Evaluate[e.run] = e.stage
		all = append(all, e.stage)
	}
	rep.Variants = slices.Concat(rep.Variants, extVariants)
	th, err := theory.Stage(p.Theory)
	if err != nil {
		return nil, nil, fmt.Errorf("profile %s: %w", p.Name, err)
	}
	in.Theory = th
	in.KernelSpeed = kernelspeed.Stage(kernelspeed.NewConfig(p.KernelSpeedLengths, p.KernelSpeedCount))
	all = append(all, th, in.KernelSpeed)
	if p.StepSpeedRounds > 0 {
		baseline := "rope"
		if !slices.Contains(variants, baseline) {
			baseline = variants[0]
		}
		in.StepSpeed = stepspeed.Stage(stepspeed.Config{Runs: timed, Baseline: baseline, Rounds: p.StepSpeedRounds, Steps: p.StepSpeedSteps})
		all = append(all, in.StepSpeed)
	}
	all = append(all, report.Stage(rep, in))
	plan, err := pipeline.NewPlan(p.Name, all)
	return plan, runs, err
}

// trainsEverySeed says whether variant v is trained at every seed, or only
// at the first (Profile.SeedVariants) and its own (Profile.VariantSeeds).
func (p Profile) trainsEverySeed(v string) bool {
	return len(p.SeedVariants) == 0 || slices.Contains(p.SeedVariants, v)
}

// trainsAt says whether variant v (or a RoPE extension's run) is trained
// or evaluated at seed, one of the profile's seeds, first the first.
func (p Profile) trainsAt(v string, seed, first uint64) bool {
	return seed == first || p.trainsEverySeed(v) || slices.Contains(p.VariantSeeds[v], seed)
}

// validateVariantSeeds checks variant_seeds: each key a registry variant
// or a RoPE extension after the first. A seed that is not one of seeds is
// not trained (so a study that overrides seeds need not clear the field),
// and a variant seed_variants trains at every seed needs none.
func (p Profile) validateVariantSeeds() error {
	for _, v := range slices.Sorted(maps.Keys(p.VariantSeeds)) {
		ext := slices.IndexFunc(p.RopeExtensions, func(m string) bool { return extensionVariant(m) == v })
		switch {
		case ext == 0:
			return fmt.Errorf("profile %s: variant_seeds names %s, the first RoPE extension, which runs at every rope seed already; drop it", p.Name, v)
		case ext < 0 && strings.HasPrefix(v, extensionVariant("")):
			return fmt.Errorf("profile %s: variant_seeds names %s, which is not one of rope_extensions %v; add the method there or drop it", p.Name, v, p.RopeExtensions)
		case ext < 0:
			if _, err := modelspec.LookupVariant(v); err != nil {
				return fmt.Errorf("profile %s: variant_seeds: %w (or a RoPE extension rope+<method> of rope_extensions %v)", p.Name, err, p.RopeExtensions)
			}
		}
	}
	return nil
}

// backendOf is the profile's training backend. It is part of the train
// stage's config: another backend gives other (float-rounding) weights.
func backendOf(p Profile) string {
	if p.Backend != "" {
		return p.Backend
	}
	if b := os.Getenv("GOMLX_BACKEND"); b != "" {
		return b
	}
	return "go"
}

// trainerFor is the default trainer of a backend and variant: the native
// one on the CPU (about an order of magnitude faster than gomlx's Go
// backend), gomlx on XLA (the native trainer is CPU-only) and for variants
// the native trainer cannot train (none today: modelspec.Variant.GomlxOnly).
// The resolved name is part of the train stage's config and key.
func trainerFor(backend, variant string) string {
	v, err := modelspec.LookupVariant(variant)
	if modelspec.IsXLABackend(backend) || (err == nil && !v.NativeTrainer()) {
		return modelspec.TrainerGomlx
	}
	return modelspec.TrainerNative
}

// Held-out and train minimums of a user corpus's split, in training
// contexts T. They depend on T only, never on the profile's evaluation
// lengths, so that changing those leaves the shards be.
const (
	// heldOutContexts is the longest evaluation window evaluate allows,
	// in contexts T (its Validate refuses longer ones).
	heldOutContexts = evaluate.MaxMultiplier
	// trainWindows: the train split keeps at least 8 non-overlapping
	// windows of T+1 tokens. TrainBatch needs only one, but a corpus that
	// leaves training less than a few windows is a mistake to report, not
	// to train on; 8 is under every built-in batch, and depends on T only.
	trainWindows = 8
)

func tokenizeStage(p Profile) (*pipeline.Stage, error) {
	cfg := tokenize.DefaultConfig(p.Tokenizer)
	if len(p.HeldOut) > 0 {
		cfg.HeldOut = slices.Clone(p.HeldOut)
	}
	if len(p.Corpus) > 0 {
		cfg.Corpus = p.Corpus
		cfg.HeldOut = nil
	}
	// Under the ValFraction rule (a user corpus) the split holds out whole
	// documents until the longest window fits (heldOutContexts x T inputs + 1 target);
	// NewKey drops both for named HeldOut files (the default corpus).
	T := int64(p.Train.Context)
	cfg.MinHeldOutTokens = heldOutContexts*T + 1
	cfg.MinTrainTokens = trainWindows * (T + 1)
	key, err := tokenize.NewKey(cfg)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", p.Name, err)
	}
	return &pipeline.Stage{
		Name: "tokenize", Kind: "tokenize", Config: key,
		Code: []string{"routebench/stages/tokenize"},
		Run: func(rc *pipeline.RunContext) error {
			return tokenize.Run(rc.Context, cfg, rc.OutDir, rc.Progress)
		},
	}, nil
}

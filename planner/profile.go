package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"routebench/modelspec"
	"routebench/stages/evaluate"
	"routebench/stages/theory"
)

// Profile holds every knob of a reproduction, and builtin below is the one
// place the built-in profiles are defined (training, evaluation, theory,
// benchmarks). A JSON file given with --config overrides fields by name,
// nested ones too ({"train": {"steps": 200}}); unknown fields are an error,
// so a typo cannot silently do nothing.
//
// This package is salted into no stage: editing a profile's defaults
// re-keys exactly the stages whose config values change.
type Profile struct {
	Name string `json:"name"`
	// Data
	Tokenizer string   `json:"tokenizer"` // bytes | gpt2
	Corpus    []string `json:"corpus"`    // empty: the default Gutenberg corpus
	// HeldOut names the default corpus's books held out for evaluation
	// (base names; empty: tokenize.DefaultHeldOut). Ignored with a user
	// corpus (corpus), which holds out by fraction.
	HeldOut []string `json:"held_out"`
	// Variants to train (empty: the registry's defaults, modelspec.DefaultVariants;
	// on-request entries such as learned-qk-randinit are trained only when named).
	Variants []string `json:"variants"`
	// Train is every training knob (modelspec.Config). Variant, profile and
	// vocabulary are filled in by Build (vocabulary from the tokenizer), and
	// the backend from Backend; a warmup longer than the steps is clamped.
	// train.trainer (native | gomlx) empty means native on the Go backend,
	// gomlx on XLA.
	Train modelspec.Config `json:"train"`
	// Seeds trains and evaluates every variant once per seed (each one
	// train.seed in turn), and the report combines them over seeds
	// (stages/report/seeds.go). Empty: the one seed train.seed. The run at
	// train.seed keeps the plain stage names ("train/rope"), so adding seeds
	// reuses it; the others are suffixed ("train/rope@seed2").
	Seeds []uint64 `json:"seeds"`
	// SeedVariants, when non-empty, are the variants trained at every seed
	// of Seeds; the others are trained once, at the first seed, so that a
	// profile spends its seeds on the variants its claims compare
	// (report: a claim is judged on the seeds all its variants have).
	// Empty: every variant at every seed.
	SeedVariants []string `json:"seed_variants"`
	// VariantSeeds gives a variant outside SeedVariants further seeds of
	// Seeds, beside the first, at which it is trained (a registration that
	// reads a variant at some seeds only); a RoPE extension "rope+<method>"
	// other than the first listed is evaluated at its seeds too, over rope's
	// weights there. Empty: the first seed only.
	VariantSeeds VariantSeeds `json:"variant_seeds"`
	// Backend is gomlx's backend for training: "go" (CPU, default) or
	// "xla:/abs/path/to/pjrt_plugin.so" (GPU binary only). Empty: $GOMLX_BACKEND, else "go".
	Backend string `json:"backend"`
	// Evaluation
	LengthMultipliers []int `json:"length_multipliers"` // evaluation lengths = T x these
	Windows           int   `json:"windows"`            // windows at the longest length (every length scores as many tokens)
	// WindowDesign is how windows are drawn across lengths:
	// "" (own windows at every length) or "prefixes" (non-overlapping
	// windows at the longest length stratified over the held-out
	// documents, shorter lengths scored on their prefixes, T on its own
	// windows; evaluate.DesignPrefixes).
	WindowDesign string `json:"window_design"`
	// CopyProbe runs the evaluate stage's zero-shot copy probe
	// (evaluate.Config.CopyProbe); on in every built-in profile.
	CopyProbe bool   `json:"copy_probe"`
	EvalSeed  uint64 `json:"eval_seed"`
	// EvalProtocols are evaluated beside the primary protocol (random
	// windows, every position scored) on every evaluation set: "in-document"
	// (inside documents), "sliding:S" (score each window's last S
	// positions), "in-document+sliding:S"; see evaluate.ParseProtocol.
	EvalProtocols []string `json:"eval_protocols"`
	// RopeExtensions evaluate the trained rope model extended at inference
	// (claim v3x, docs/statistics.md): each of "yarn", "pi", "ntk" is a
	// stage evaluate/rope+<method> reading train/rope, s = L / T at each
	// length, at the lengths ExtensionMultipliers picks, primary protocol
	// only, training corpus only. The first listed method is evaluated at
	// every seed rope is trained at, the others at the first seed only.
	// Empty (the default): none.
	RopeExtensions []string `json:"rope_extensions"`
	// EvalCorpora are further evaluation sets, each "PATH" or "NAME=PATH"
	// (a file, directory or glob, as in corpus): tokenized on their own with
	// the training tokenizer, every document evaluation text, and evaluated
	// by every trained model; nothing trains on them (--eval-corpus).
	EvalCorpora []string `json:"eval_corpora"`
	// Theory is the theory stage's configuration (theory.SmokeConfig or
	// theory.CPUConfig, overridable field by field).
	Theory theory.Config `json:"theory"`
	// Kernel benchmarks
	KernelSpeedCount   int   `json:"kernel_speed_count"`   // repetitions of each kernel benchmark
	KernelSpeedLengths []int `json:"kernel_speed_lengths"` // attention lengths benchmarked
	// Step-time benchmark (stage stepspeed): step_speed_rounds
	// interleaved rounds of step_speed_steps optimizer steps of every
	// variant at the training shape, ratios to rope; 0 rounds leaves the
	// stage out.
	StepSpeedRounds int `json:"step_speed_rounds"`
	StepSpeedSteps  int `json:"step_speed_steps"`
}

// trainDefaults are the hyperparameters every built-in profile shares.
func trainDefaults() modelspec.Config {
	return modelspec.Config{LR: 2e-3, MinLR: 1e-4, WeightDecay: 0.01, Clip: 1.0, SigmaMax: 1.0, SigmaMin: 0.35, Seed: 1}
}

// cpuV1StepsNote justifies the cpu-v1 profile's 400 steps; it is copied into train.json.
const cpuV1StepsNote = "cpu profile: 400 steps x 16 windows x 128 tokens (819K tokens), the pilot's model, kept so that " +
	"the native and the gomlx trainer can be compared (the pilot showed the paper's ordering after 400 steps). " +
	"The native trainer's step time of each variant, and its ratio to rope's, is the stepspeed stage's " +
	"(RESULTS.md, Training); gomlx took 0.8-1.0 s/step idle (~6 min per variant)."

// cpuStepsNote justifies the cpu profile's training length; it is copied into train.json.
const cpuStepsNote = "cpu profile: the design card's context T = 512 (lengths 512..65,536 = 1..128 T), the pilot's model " +
	"(d 128, 2 layers), 400 steps x 8 windows x 512 tokens (1.6M tokens). A T = 512 pilot (2026-12-01) showed " +
	"value transport's direction at this shape where T = 128 did not; docs/profiles.md gives the sizing."

// cpuHeldOut are the cpu profile's held-out books (claims v3,
// docs/statistics.md): tokenize's default two and six more, so that its 8
// windows at 65,536 lie in 8 books. Each is >= 84K bytes, and each held
// out author but four keeps a sibling book in training.
var cpuHeldOut = []string{"austen-emma.txt", "melville-moby_dick.txt", "carroll-alice.txt", "shakespeare-caesar.txt",
	"shakespeare-macbeth.txt", "burgess-busterbrown.txt", "bryant-stories.txt", "chesterton-thursday.txt"}

// cpuSeeds are the cpu profile's confirmatory seeds: 21-25 of claims v3
// (v3x, v5k, v4m), 31-35 of claims v3x2 and v4m2 (registered 2026-12-07,
// docs/statistics.md), never used for a design choice (seeds 1-3 and 11-15
// were, in exploratory runs). Each family reads its own seeds alone
// (stages/report/registrations.json).
var cpuSeeds = []uint64{21, 22, 23, 24, 25, 31, 32, 33, 34, 35}

// VariantSeeds are Profile.VariantSeeds: the seeds of each variant named.
// A --config or --set value replaces the whole map (as it does a list),
// where JSON would merge its keys into the profile's: --set
// variant_seeds={} clears it.
type VariantSeeds map[string][]uint64

// UnmarshalJSON replaces v with the decoded map.
func (v *VariantSeeds) UnmarshalJSON(b []byte) error {
	var m map[string][]uint64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*v = m
	return nil
}

// cpuVariantSeeds are the seeds v3x2 and v4m2 read beyond the every-seed
// variants: nope at 31-35 (M1' pairs random-qk with nope per seed), the
// learned and content-dependent variants at 31 (M3'), and PI and NTK at
// 31 (v3x2's descriptive ratios). The rest of the registration's runs are
// cpuSeedVariants' and YaRN's, at every seed.
var cpuVariantSeeds = VariantSeeds{
	"nope":       {31, 32, 33, 34, 35},
	"learned-qk": {31}, "learned-qkv": {31}, "learned-proj-qkv": {31}, "path": {31},
	"rope+pi": {31}, "rope+ntk": {31},
}

// cpuSeedVariants are the variants the cpu profile trains at every seed:
// those of the paired claims (accumulated vs RoPE, value transport,
// rotation-only vs ALiBi's far mass). The rest are trained at seed 1 only,
// so that the profile fits ~1 hour of 2 cores cold (docs/profiles.md).
var cpuSeedVariants = []string{"rope", "alibi", "random-qk", "random-qkv"}

// builtin returns the built-in profiles (fresh values: callers may modify them).
//
//   - smoke: a seconds-scale model for CI; 240 steps so that the variants
//     differ by percents, enough for the CI gate to see a change to one.
//   - cpu: what `make reproduce` runs: the design card's T = 512 and lengths
//     512..65,536 on the pilot's model (d 128, 2 layers, 4 heads, batch 8,
//     byte tokens); 3 seeds for the paired claims' variants, one for the
//     rest, 2 windows at 65,536 (equal tokens: 131K at every length).
//   - cpu-v1: the cpu profile before 2026-12-02 (T 128, lengths
//     128..16,384, batch 16, every default variant x 3 seeds, 16 windows),
//     kept by name to compare with earlier results.
//   - paper: the paper's 16 x 768, 12 heads, context 512, GPT-2 vocabulary; for GPUs.
func builtin() map[string]Profile {
	smoke := trainDefaults()
	smoke.DModel, smoke.Layers, smoke.Heads, smoke.DHidden = 32, 2, 2, 128
	smoke.Context, smoke.Batch, smoke.Steps, smoke.Warmup = 32, 8, 240, 6
	smoke.LR = 3e-3
	smoke.CheckpointEvery, smoke.EvalEvery, smoke.EvalBatches = 20, 20, 2

	cpuV1 := trainDefaults()
	cpuV1.DModel, cpuV1.Layers, cpuV1.Heads, cpuV1.DHidden = 128, 2, 4, 512
	cpuV1.Context, cpuV1.Batch, cpuV1.Steps, cpuV1.Warmup = 128, 16, 400, 40
	cpuV1.CheckpointEvery, cpuV1.EvalEvery, cpuV1.EvalBatches = 50, 50, 4
	cpuV1.StepsNote = cpuV1StepsNote

	cpu := cpuV1
	cpu.Context, cpu.Batch = 512, 8
	cpu.Seed = cpuSeeds[0]
	cpu.StepsNote = cpuStepsNote

	paper := trainDefaults()
	paper.DModel, paper.Layers, paper.Heads, paper.DHidden = 768, 16, 12, 3072
	paper.Context, paper.Batch, paper.Steps, paper.Warmup = 512, 32, 50000, 2000
	paper.LR, paper.MinLR, paper.WeightDecay = 6e-4, 6e-5, 0.1
	paper.CheckpointEvery, paper.EvalEvery, paper.EvalBatches = 1000, 1000, 16

	long := evaluate.Multipliers()
	// Sliding-window scoring at stride T/2 beside the primary protocol: it
	// scores the primary windows' last T/2 positions, so it costs no forward
	// pass (cpu, 2 loaded cores: 108 s without, 123 s with, the difference
	// within the machine's noise; "in-document" would double the time: 264 s).
	return map[string]Profile{
		"smoke": {
			Name: "smoke", Tokenizer: "bytes", Train: smoke,
			LengthMultipliers: []int{1, 2, 4, 8}, Windows: 4, EvalSeed: 7, CopyProbe: true, EvalProtocols: []string{"sliding:16"},
			Theory: theory.SmokeConfig(), KernelSpeedCount: 1, KernelSpeedLengths: []int{1024}, StepSpeedRounds: 2, StepSpeedSteps: 1,
		},
		"cpu": {
			Name: "cpu", Tokenizer: "bytes", HeldOut: slices.Clone(cpuHeldOut), Train: cpu, Seeds: slices.Clone(cpuSeeds), SeedVariants: slices.Clone(cpuSeedVariants), VariantSeeds: maps.Clone(cpuVariantSeeds),
			LengthMultipliers: long, Windows: 8, WindowDesign: evaluate.DesignPrefixes, EvalSeed: 7, CopyProbe: true, EvalProtocols: []string{"sliding:256"}, Theory: theory.CPUConfig(), KernelSpeedCount: 5, KernelSpeedLengths: []int{1024, 4096},
			StepSpeedRounds: 5, StepSpeedSteps: 2, RopeExtensions: []string{"yarn", "pi", "ntk"},
		},
		"cpu-v1": {
			Name: "cpu-v1", Tokenizer: "bytes", Train: cpuV1, Seeds: []uint64{1, 2, 3},
			LengthMultipliers: long, Windows: 16, EvalSeed: 7, CopyProbe: true, EvalProtocols: []string{"sliding:64"}, Theory: theory.CPUConfig(), KernelSpeedCount: 5, KernelSpeedLengths: []int{1024, 4096},
			StepSpeedRounds: 7, StepSpeedSteps: 3,
		},
		"paper": {
			Name: "paper", Tokenizer: "gpt2", Train: paper,
			LengthMultipliers: long, Windows: 16, EvalSeed: 7, CopyProbe: true, EvalProtocols: []string{"sliding:256"}, Theory: theory.CPUConfig(), KernelSpeedCount: 5, KernelSpeedLengths: []int{1024, 4096},
			StepSpeedRounds: 3, StepSpeedSteps: 2,
		},
	}
}

// ProfileNames lists the built-in profiles.
func ProfileNames() []string {
	var n []string
	for k := range builtin() {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// LoadProfile returns a built-in profile with the overrides in configPath
// (may be empty) applied.
func LoadProfile(name, configPath string) (Profile, error) {
	return LoadProfileWith(name, Overrides{Config: configPath})
}

// Overrides are the command line's changes to a built-in profile. They are
// applied in field order, so a --set wins over the file it follows.
type Overrides struct {
	Config string // a JSON file of fields (--config); may be empty
	// Patch is a JSON object of fields, as a --config file holds (a sweep
	// file's "config"), applied after Config; may be empty.
	Patch  []byte
	Set    []string // key=value assignments (--set), see SetPatch
	Corpus []string // replaces the corpus field when non-empty (--corpus)
	// EvalCorpus replaces the eval_corpora field when non-empty (--eval-corpus).
	EvalCorpus []string
}

// LoadProfileWith returns a built-in profile with the overrides applied.
func LoadProfileWith(name string, o Overrides) (Profile, error) {
	p, ok := builtin()[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown profile %q (choose one of: %s)", name, strings.Join(ProfileNames(), ", "))
	}
	if o.Config != "" {
		data, err := os.ReadFile(o.Config)
		if err != nil {
			return Profile{}, fmt.Errorf("config %s: %w", o.Config, err)
		}
		if err := p.override(data); err != nil {
			return Profile{}, fmt.Errorf("config %s is malformed: %w (fix the JSON; fields are those of plan.Profile)", o.Config, err)
		}
		if p.Name != name {
			return Profile{}, fmt.Errorf("config %s sets name %q but the profile is %q; drop the name field", o.Config, p.Name, name)
		}
	}
	if len(o.Patch) > 0 {
		if err := p.override(o.Patch); err != nil {
			return Profile{}, fmt.Errorf("config %s is malformed: %w (fields are those of plan.Profile)", o.Patch, err)
		}
		if p.Name != name {
			return Profile{}, fmt.Errorf("config %s sets name %q but the profile is %q; drop the name field", o.Patch, p.Name, name)
		}
	}
	for _, a := range o.Set {
		patch, err := SetPatch(a)
		if err != nil {
			return Profile{}, err
		}
		// The same decoder as the file's, so a --set and the same field in
		// a --config file cannot mean different things.
		if err := p.override(patch); err != nil {
			return Profile{}, fmt.Errorf("--set %s: %w (patch %s)", a, err, patch)
		}
		if p.Name != name {
			return Profile{}, fmt.Errorf("--set %s: the name is the profile's (--profile %s); drop this --set", a, name)
		}
	}
	if len(o.Corpus) > 0 {
		p.Corpus = append([]string(nil), o.Corpus...)
	}
	if len(o.EvalCorpus) > 0 {
		p.EvalCorpora = append([]string(nil), o.EvalCorpus...)
	}
	return p, p.validate()
}

// override decodes JSON onto p: named fields replace (slices whole), nested
// objects merge field by field, unknown fields are an error.
func (p *Profile) override(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(p)
}

func (p Profile) validate() error {
	switch p.Tokenizer {
	case "bytes", "gpt2":
	default:
		return fmt.Errorf("profile %s: tokenizer %q is not bytes or gpt2", p.Name, p.Tokenizer)
	}
	if p.Windows <= 0 || len(p.LengthMultipliers) == 0 {
		return fmt.Errorf("profile %s: windows (%d) and length_multipliers (%v) must be positive/non-empty", p.Name, p.Windows, p.LengthMultipliers)
	}
	if p.Windows == 1 {
		return fmt.Errorf("profile %s: windows = 1 gives no interval at the longest length (one window has no spread); set windows to 2 or more (8: the cpu profile)", p.Name)
	}

	for i, m := range p.LengthMultipliers {
		if m <= 0 || (i > 0 && m <= p.LengthMultipliers[i-1]) {
			return fmt.Errorf("profile %s: length_multipliers %v must be positive and increasing", p.Name, p.LengthMultipliers)
		}
	}
	for _, s := range p.EvalProtocols {
		if _, err := evaluate.ParseProtocol(s); err != nil {
			return fmt.Errorf("profile %s: eval_protocols: %w", p.Name, err)
		}
	}
	if err := p.validateRopeExtensions(); err != nil {
		return err
	}
	if p.KernelSpeedCount <= 0 || len(p.KernelSpeedLengths) == 0 {
		return fmt.Errorf("profile %s: kernel_speed_count %d and kernel_speed_lengths %v must be positive/non-empty", p.Name, p.KernelSpeedCount, p.KernelSpeedLengths)
	}
	if p.StepSpeedRounds < 0 || (p.StepSpeedRounds > 0 && p.StepSpeedSteps <= 0) {
		return fmt.Errorf("profile %s: step_speed_rounds %d must be >= 0 and, above 0, step_speed_steps %d positive", p.Name, p.StepSpeedRounds, p.StepSpeedSteps)
	}
	for i, s := range p.Seeds {
		if slices.Contains(p.Seeds[:i], s) {
			return fmt.Errorf("profile %s: seeds %v names seed %d twice; list each seed once", p.Name, p.Seeds, s)
		}
	}
	if len(p.SeedVariants) > 0 {
		// Named but not trained is fine (a sweep's variants may leave some
		// out); a name the registry lacks is a typo to report.
		for _, v := range p.SeedVariants {
			if _, err := modelspec.LookupVariant(v); err != nil {
				return fmt.Errorf("profile %s: seed_variants: %w", p.Name, err)
			}
		}
		if len(p.Seeds) < 2 {
			return fmt.Errorf("profile %s: seed_variants %v needs at least two seeds (seeds %v); set seeds or drop seed_variants", p.Name, p.SeedVariants, p.Seeds)
		}
	}
	if err := p.validateVariantSeeds(); err != nil {
		return err
	}
	if p.Train.Variant != "" || p.Train.Profile != "" || p.Train.Vocab != 0 || p.Train.Backend != "" {
		return fmt.Errorf("profile %s: train.variant, train.profile, train.vocab and train.backend are set by the pipeline "+
			"(variants, the profile name, the tokenizer, backend); drop them from the config and --set", p.Name)
	}
	return nil
}

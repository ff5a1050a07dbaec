package spec

import "fmt"

// Names of the hyperparameters as they appear in train.json and in error
// messages (the JSON keys of Config). One place, so reports and code agree.
const (
	ParamVocab           = "vocab"
	ParamDModel          = "d_model"
	ParamLayers          = "layers"
	ParamDHidden         = "d_hidden"
	ParamContext         = "context"
	ParamBatch           = "batch"
	ParamSteps           = "steps"
	ParamWarmup          = "warmup"
	ParamLR              = "lr"
	ParamWeightDecay     = "weight_decay"
	ParamSigmaMin        = "sigma_min"
	ParamCheckpointEvery = "checkpoint_every"
	ParamEvalEvery       = "eval_every"
)

// Fixed architecture constants (recorded in Arch).
const (
	NormEps  = 1e-5
	RopeBase = 10000.0
)

// Config is everything that determines a training run (train.json's
// "config"; the train stage hashes it).
type Config struct {
	Variant         string  `json:"variant"`
	Profile         string  `json:"profile"`
	Vocab           int     `json:"vocab"`
	DModel          int     `json:"d_model"`
	Layers          int     `json:"layers"`
	Heads           int     `json:"heads"`
	DHidden         int     `json:"d_hidden"`
	Context         int     `json:"context"` // training context T
	Batch           int     `json:"batch"`
	Steps           int     `json:"steps"`
	Warmup          int     `json:"warmup"`
	LR              float64 `json:"lr"`     // peak learning rate
	MinLR           float64 `json:"min_lr"` // end of the cosine
	WeightDecay     float64 `json:"weight_decay"`
	Clip            float64 `json:"clip"`      // global gradient norm; <= 0 disables
	SigmaMax        float64 `json:"sigma_max"` // angle std of the fastest pair (accumulated variants)
	SigmaMin        float64 `json:"sigma_min"` // angle std of the slowest pair
	Seed            uint64  `json:"seed"`
	CheckpointEvery int     `json:"checkpoint_every"`
	EvalEvery       int     `json:"eval_every"`
	EvalBatches     int     `json:"eval_batches"`
	Backend         string  `json:"backend"` // "go" (default) or "xla..." (needs the XLA hook)
}

// Profiles, in the order ProfileConfig knows them.
var Profiles = []string{"smoke", "cpu", "paper"}

// ProfileConfig returns the defaults of a profile for one variant.
//
//   - smoke: a seconds-scale model for CI; all seven variants train in about a minute.
//   - cpu: the pilot's model (d 128, 2 layers, 4 heads, T 128, batch 16, byte
//     tokens); Steps is sized so all seven variants fit in ~40 minutes of 2 cores
//     (see CPUStepsNote).
//   - paper: the paper's 16 x 768, 12 heads, context 512, GPT-2 vocabulary; for GPUs.
func ProfileConfig(profile, variant string, vocab int) (Config, error) {
	if _, err := LookupVariant(variant); err != nil {
		return Config{}, err
	}
	c := Config{
		Variant: variant, Profile: profile, Vocab: vocab,
		LR: 2e-3, MinLR: 1e-4, WeightDecay: 0.01, Clip: 1.0,
		SigmaMax: 1.0, SigmaMin: 0.35, Seed: 1, Backend: "go",
	}
	switch profile {
	case "smoke":
		c.DModel, c.Layers, c.Heads, c.DHidden = 32, 2, 2, 128
		c.Context, c.Batch, c.Steps, c.Warmup = 32, 8, 60, 6
		c.LR = 3e-3
		c.CheckpointEvery, c.EvalEvery, c.EvalBatches = 20, 20, 2
	case "cpu":
		c.DModel, c.Layers, c.Heads, c.DHidden = 128, 2, 4, 512
		c.Context, c.Batch, c.Steps, c.Warmup = 128, 16, CPUSteps, 40
		c.CheckpointEvery, c.EvalEvery, c.EvalBatches = 50, 50, 4
	case "paper":
		c.DModel, c.Layers, c.Heads, c.DHidden = 768, 16, 12, 3072
		c.Context, c.Batch, c.Steps, c.Warmup = 512, 32, 50000, 2000
		c.LR, c.MinLR, c.WeightDecay = 6e-4, 6e-5, 0.1
		c.CheckpointEvery, c.EvalEvery, c.EvalBatches = 1000, 1000, 16
	default:
		return Config{}, fmt.Errorf("spec: unknown profile %q (known: %v)", profile, Profiles)
	}
	return c, c.Validate()
}

// CPUSteps is the cpu profile's step count. See CPUStepsNote.
const CPUSteps = 400

// CPUStepsNote justifies CPUSteps; it is copied into train.json.
const CPUStepsNote = "cpu profile: 400 steps x 16 windows x 128 tokens (819K tokens). BenchmarkStepRatio " +
	"(2 cores, 2026-11-30): fastest steps 0.79-0.98 s for the 7 variants (6.0-6.5 GFLOP each), so ~5.5-6.5 min " +
	"per variant with evaluation and ~40 min for all 7 on an idle machine; the pilot showed the paper's ordering " +
	"after 400 steps of this model. On a machine shared with other jobs, steps were 1.6-2.1 s (median)."

// Validate checks a config before any work is done.
func (c Config) Validate() error {
	v, err := LookupVariant(c.Variant)
	if err != nil {
		return err
	}
	bad := func(param string, val any, want string) error {
		return fmt.Errorf("spec: train config %s/%s: %s = %v, want %s", c.Profile, c.Variant, param, val, want)
	}
	switch {
	case c.Vocab < 2:
		return bad(ParamVocab, c.Vocab, ">= 2")
	case c.DModel <= 0 || c.Heads <= 0 || c.DModel%c.Heads != 0 || (c.DModel/c.Heads)%2 != 0:
		return bad(ParamDModel, c.DModel, "a positive multiple of heads with an even d_head")
	case c.Layers <= 0:
		return bad(ParamLayers, c.Layers, "> 0")
	case c.DHidden <= 0:
		return bad(ParamDHidden, c.DHidden, "> 0")
	case c.Context < 2:
		return bad(ParamContext, c.Context, ">= 2")
	case c.Batch <= 0:
		return bad(ParamBatch, c.Batch, "> 0")
	case c.Steps <= 0:
		return bad(ParamSteps, c.Steps, "> 0")
	case c.Warmup < 0 || c.Warmup > c.Steps:
		return bad(ParamWarmup, c.Warmup, "in [0, steps]")
	case !(c.LR > 0) || c.MinLR < 0 || c.MinLR > c.LR:
		return bad(ParamLR, c.LR, "> 0 and >= min_lr >= 0")
	case c.WeightDecay < 0:
		return bad(ParamWeightDecay, c.WeightDecay, ">= 0")
	case v.Rotation == RotationAccumulated && !(c.SigmaMax > 0 && c.SigmaMin > 0 && c.SigmaMin <= c.SigmaMax):
		return bad(ParamSigmaMin, c.SigmaMin, "0 < sigma_min <= sigma_max")
	case c.CheckpointEvery < 0:
		return bad(ParamCheckpointEvery, c.CheckpointEvery, ">= 0 (0: only at the end)")
	case c.EvalEvery < 0 || c.EvalBatches < 0:
		return bad(ParamEvalEvery, c.EvalEvery, ">= 0 with eval_batches >= 0")
	}
	return nil
}

// Arch is the Arch of the network this config trains.
func (c Config) Arch() Arch {
	v, _ := LookupVariant(c.Variant)
	a := Arch{
		Variant: c.Variant, Profile: c.Profile, Vocab: c.Vocab, DModel: c.DModel,
		Layers: c.Layers, Heads: c.Heads, DHidden: c.DHidden, Context: c.Context,
		NormEps: NormEps, RopeBase: RopeBase, Rotation: v.Rotation, ValueRot: v.ValueRot, ALiBi: v.ALiBi,
	}
	if v.Rotation == RotationAccumulated {
		a.AngleNote = AngleNote(c)
	}
	return a
}

package modelspec

import (
	"fmt"
	"strings"
)

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
	ParamTrainer         = "trainer"
)

// AdamW's constants, not tuned, so not in Config; both trainers (gomlx and
// native) read them here.
const (
	AdamBeta1 = 0.9
	AdamBeta2 = 0.95
	AdamEps   = 1e-8
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
	// Trainer is which code trains: TrainerNative (model/nativetrain, CPU
	// only) or TrainerGomlx (the reference, and the XLA/GPU path). Empty
	// means gomlx; the profiles resolve it (stages.Profile.Trainer).
	Trainer string `json:"trainer,omitempty"`
	// StepsNote says why a profile trains this long (it is in train.json).
	StepsNote string `json:"steps_note,omitempty"`
}

// The trainers (Config.Trainer).
const (
	TrainerNative = "native"
	TrainerGomlx  = "gomlx"
)

// TrainerName is the trainer a config runs (empty: gomlx).
func (c Config) TrainerName() string {
	if c.Trainer == "" {
		return TrainerGomlx
	}
	return c.Trainer
}

// IsXLABackend reports whether a gomlx backend name is XLA's (a GPU or
// XLA-CPU plugin), where only the gomlx trainer runs.
func IsXLABackend(backend string) bool { return strings.HasPrefix(backend, "xla") }

// Validate checks a config before any work is done.
func (c Config) Validate() error {
	v, err := LookupVariant(c.Variant)
	if err != nil {
		return err
	}
	bad := func(param string, val any, want string) error {
		return fmt.Errorf("modelspec: train config %s/%s: %s = %v, want %s", c.Profile, c.Variant, param, val, want)
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
	case v.DrawsRandomAngles() && !(c.SigmaMax > 0 && c.SigmaMin > 0 && c.SigmaMin <= c.SigmaMax):
		return bad(ParamSigmaMin, c.SigmaMin, "0 < sigma_min <= sigma_max")
	case c.CheckpointEvery < 0:
		return bad(ParamCheckpointEvery, c.CheckpointEvery, ">= 0 (0: only at the end)")
	case c.Trainer != "" && c.Trainer != TrainerNative && c.Trainer != TrainerGomlx:
		return bad(ParamTrainer, c.Trainer, fmt.Sprintf("%q or %q", TrainerNative, TrainerGomlx))
	case c.Trainer == TrainerNative && !v.NativeTrainer():
		return bad(ParamTrainer, c.Trainer, fmt.Sprintf("%q (the native trainer does not implement every part of %s; train it with gomlx)", TrainerGomlx, c.Variant))
	case c.Trainer == TrainerNative && IsXLABackend(c.Backend):
		return bad(ParamTrainer, c.Trainer, fmt.Sprintf("%q with backend %q (the native trainer runs on the CPU; use %q for XLA)", TrainerGomlx, c.Backend, TrainerGomlx))
	case c.EvalEvery < 0 || c.EvalBatches < 0:
		return bad(ParamEvalEvery, c.EvalEvery, ">= 0 with eval_batches >= 0")
	}
	return nil
}

// Normalized is c with the fields its variant never reads set to zero, so
// that the train stage's key (a hash of its config) changes only with what
// the run reads: --set sigma_min=0.1 re-keys random-qk, not rope or the
// zero-started learned variants. An unknown variant is returned unchanged
// (Validate reports it).
func (c Config) Normalized() Config {
	v, err := LookupVariant(c.Variant)
	if err != nil {
		return c
	}
	if !v.DrawsRandomAngles() {
		c.SigmaMax, c.SigmaMin = 0, 0
	}
	return c
}

// Arch is the Arch of the network this config trains.
func (c Config) Arch() Arch {
	v, _ := LookupVariant(c.Variant)
	a := Arch{
		Variant: c.Variant, Profile: c.Profile, Vocab: c.Vocab, DModel: c.DModel,
		Layers: c.Layers, Heads: c.Heads, DHidden: c.DHidden, Context: c.Context,
		NormEps: NormEps, RopeBase: RopeBase, Rotation: v.Rotation, ValueRot: v.ValueRot, ALiBi: v.ALiBi, KerpleLog: v.KerpleLog,
		Householder: v.Householder, ForgetGate: v.ForgetGate, AngleProj: v.AngleProj,
	}
	if v.Householder {
		a.PathRank, a.PathConv = PathRank, PathConv
	}
	if v.Rotation == RotationAccumulated {
		a.AngleNote = AngleNote(c)
	}
	return a
}

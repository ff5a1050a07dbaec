// Package evaluate is the pipeline stage that measures long-context
// perplexity of one trained variant with the native evaluator
// (model/nativeeval), from the training length T up to 128 T, and the
// far-mass diagnostic that explains where a model fails. It reads the
// trained weights and a tokenize artifact (the training corpus's held-out
// split, or an evaluation-only corpus) and never trains.
//
// Primary protocol (ProtocolRandom, recorded in every result): for each
// length L = T x m, the same seeded windows of L+1 held-out tokens for every
// model; loss averaged over all L positions of a window; PPL = exp(mean
// window loss); 95% Student-t intervals over windows for PPL and (Welch's)
// for PPL(L)/PPL(T) (the paper's ratio, independent windows at each length);
// each window's loss over its own first T positions and the paired prefix
// ratio (the v2 claims' ratio; docs/statistics.md says why); as many tokens
// at every length as at the longest (Config.WindowsAt); the loss by position bucket [0,T), [T,2T), [2T,4T), ...;
// and, on the first FarWindows windows, the attention mass beyond distance D
// (D = T and T/4) and the attention entropy, averaged over layers, heads and
// queries; for PaTH models, the mean Householder step per layer and head
// over every window and its spectral gap (stepgap.go); at the longest
// length, each window's loss in log-spaced position bins (positions.go);
// from 2T, the same-token context gain of each window's last T/2
// positions against a short-context pass (contextgain.go). Config.Protocols adds others beside it (ParseProtocol): windows
// inside documents, and sliding-window scoring of each window's last S
// positions, which reuses the primary protocol's forward passes.
package evaluate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"routebench/modelspec"
	"routebench/modelspec/weights"
	"routebench/pipeline"
	"routebench/stages/tokenize/shards"
	"routebench/stats"
)

// Kind is the stage kind; names are "evaluate/<variant>".
const Kind = "evaluate"

// Output files.
const (
	ResultFile = "eval.json"
	SpeedFile  = "eval-speed.json" // volatile: tokens/s
)

// WeightsInput names the trained-weights input.
const WeightsInput = "weights"

// Config is everything that determines an evaluation.
type Config struct {
	Variant string `json:"variant"`
	Profile string `json:"profile"`
	// Corpus names the evaluation corpus the shards input holds (an
	// evaluation-only tokenize stage); empty: the training corpus's
	// held-out split. It names the stage and labels the results.
	Corpus      string `json:"corpus,omitempty"`
	Context     int    `json:"context"` // training length T
	Multipliers []int  `json:"multipliers"`
	// Windows is the number of windows at the longest length.
	Windows int `json:"windows"`
	// EqualTokens scores at every length at least as many tokens as the
	// longest length does: Windows x (longest / L) windows of length L
	// (WindowsAt), so that PPL(T), the denominator of every paper ratio,
	// is not the noisiest figure of the run (16 windows of T are 1/128 of
	// the tokens of 16 windows of 128 T). The extra windows are short, so
	// they cost little. false (results before format 2): Windows at
	// every length.
	EqualTokens bool `json:"equal_tokens,omitempty"`
	// Design is how windows are drawn across lengths: DesignIndependent
	// (empty) or DesignPrefixes (prefixes.go).
	Design       string `json:"design,omitempty"`
	Seed         uint64 `json:"seed"`
	FarDistances []int  `json:"far_distances"`
	FarWindows   int    `json:"far_windows"` // windows per length that also get the diagnostic
	// ProbeQueries is the number of mechanism-probe queries per window and
	// length (mechanism.go; claims v4m), in the last T positions of each
	// length's window; 0: no probe.
	ProbeQueries int `json:"probe_queries,omitempty"`
	// CopyProbe runs the zero-shot copy probe (copyprobe.go) beside the
	// primary protocol (never under RopeScaling).
	CopyProbe  bool `json:"copy_probe,omitempty"`
	Confidence float64
	// Protocols are evaluated beside the primary one (ParseProtocol), in
	// this order; empty (the default) is the primary protocol alone.
	Protocols []string `json:"protocols,omitempty"`
	// RopeScaling evaluates a rope model extended at inference by this
	// method (ropescale.PI, NTK or YaRN) with s = L / T at each
	// length L (ropescaling.go); empty: none. It names the stage
	// evaluate/<variant>+<method>.
	RopeScaling string `json:"rope_scaling,omitempty"`
}

// NewConfig is the protocol for a variant trained at context T.
func NewConfig(variant, profile string, T int, multipliers []int, windows int, seed uint64) Config {
	return Config{Variant: variant, Profile: profile, Context: T, Multipliers: multipliers, Windows: windows,
		Seed: seed, FarDistances: []int{T / 4, T}, FarWindows: min(4, windows), EqualTokens: true,
		ProbeQueries: 8, CopyProbe: true, Confidence: stats.Confidence}
}

// WindowsAt is the number of windows evaluated at length L: Windows, or
// with EqualTokens ceil(Windows x longest / L). The first Windows of them
// are the windows a profile without EqualTokens scores (EvalWindows draws
// window i from its index), so the old windows are a subset of the new.
func (c Config) WindowsAt(L int) int {
	if !c.EqualTokens || len(c.Multipliers) == 0 {
		return c.Windows
	}
	longest := c.Context * slices.Max(c.Multipliers)
	return (c.Windows*longest + L - 1) / L
}

// stageName is the stage's name: evaluate/<variant>, or
// evaluate/<variant>@<corpus> on an evaluation corpus.
func (c Config) stageName() string {
	name := Kind + "/" + c.RunVariant()
	if c.Corpus != "" {
		return name + "@" + c.Corpus
	}
	return name
}

// RunVariant is the name the evaluated model goes by in stage names and
// the report: the variant, or <variant>+<method> under RopeScaling.
func (c Config) RunVariant() string {
	if c.RopeScaling != "" {
		return c.Variant + "+" + c.RopeScaling
	}
	return c.Variant
}

// MaxMultiplier is the longest evaluation length, in training contexts T:
// the paper's 65K at its T = 512. Multipliers are the powers of two up to it
// (Multipliers); the planner sizes a corpus's held-out split from it.
const MaxMultiplier = 128

// Multipliers lists every allowed length multiplier, 1, 2, 4, ...,
// MaxMultiplier: the built-in profiles' lengths.
func Multipliers() []int {
	var ms []int
	for m := 1; m <= MaxMultiplier; m *= 2 {
		ms = append(ms, m)
	}
	return ms
}

// Validate rejects lengths and protocols the protocol does not allow.
func (c Config) Validate() error {
	if _, err := parseProtocols(c.Protocols); err != nil {
		return fmt.Errorf("%s: %w", c.stageName(), err)
	}
	if c.Context <= 0 || c.Windows <= 0 || len(c.Multipliers) == 0 {
		return fmt.Errorf("%s: context %d, windows %d and multipliers %v must be positive", c.stageName(), c.Context, c.Windows, c.Multipliers)
	}
	for _, m := range c.Multipliers {
		if m <= 0 || m&(m-1) != 0 || m > MaxMultiplier {
			return fmt.Errorf("%s: length %d x T is not allowed: multipliers must be powers of two from 1 to %d (set length_multipliers to some of %v)", c.stageName(), m, MaxMultiplier, Multipliers())
		}
	}
	switch c.Design {
	case DesignIndependent, DesignPrefixes:
	default:
		return fmt.Errorf("%s: window design %q is not %q (the default, own windows at every length) or %q", c.stageName(), c.Design, DesignIndependent, DesignPrefixes)
	}
	if err := c.validateRopeScaling(); err != nil {
		return err
	}
	if c.Multipliers[0] != 1 {
		return fmt.Errorf("%s: multipliers %v must start at 1 (ratios are relative to PPL at T)", c.stageName(), c.Multipliers)
	}
	return nil
}

// Stage returns the evaluation stage of one variant.
func Stage(cfg Config, tokenized, trained *pipeline.Stage) *pipeline.Stage {
	return &pipeline.Stage{
		Name:     cfg.stageName(),
		Kind:     Kind,
		Config:   cfg,
		Inputs:   []pipeline.Input{{Name: shards.Input, Stage: tokenized}, {Name: WeightsInput, Stage: trained}},
		Code:     []string{"routebench/stages/evaluate"},
		Volatile: []string{SpeedFile},
		Run:      func(rc *pipeline.RunContext) error { return run(rc, cfg) },
	}
}

// checkHeldOut fails, before any work, if the held-out split cannot hold
// the longest length's windows as distinct text: WindowsAt(L) x (L+1)
// tokens (L inputs, and the targets shifted by one). Windows are drawn at
// random offsets and may overlap, so a shorter split would still run, but
// its windows would repeat one text and their intervals overstate what was
// measured. The tokenize stage cannot check this: the window lengths are
// not part of its config, so that changing them keeps the shards and the
// trained models.
func (c Config) checkHeldOut(info shards.Info) error {
	L := c.Context * slices.Max(c.Multipliers)
	n := c.WindowsAt(L)
	need := int64(n) * (int64(L) + 1)
	have := info.Splits[shards.SplitHeldOut].Tokens
	switch {
	case have >= need:
		return nil
	case c.Corpus != "":
		return fmt.Errorf("%s: the evaluation corpus %s has %d tokens (%s), but %d windows of the longest length (%d x T = %d) need %d; give a longer evaluation corpus, set windows lower or evaluate shorter windows (the profile's length_multipliers)",
			c.stageName(), c.Corpus, have, info.Tokenizer, n, slices.Max(c.Multipliers), L, need)
	}
	return fmt.Errorf("%s: the held-out split has %d tokens (%s), but %d windows of the longest length (%d x T = %d) need %d; hold out more text (tokenize's HeldOut or ValFraction, or a larger corpus), set windows lower or evaluate shorter windows (the profile's length_multipliers)",
		c.stageName(), have, info.Tokenizer, n, slices.Max(c.Multipliers), L, need)
}

// checkVocab fails if the shards' token ids are not the model's: another
// tokenizer, or another vocabulary, than the one it was trained with.
func (c Config) checkVocab(info shards.Info, arch modelspec.Arch) error {
	if info.VocabSize == arch.Vocab {
		return nil
	}
	what := "the held-out split is"
	if c.Corpus != "" {
		what = "the evaluation corpus " + c.Corpus + " is"
	}
	return fmt.Errorf("%s: %s tokenized with %s (vocabulary %d), but the model was trained on a vocabulary of %d; tokenize it with the training tokenizer (the profile's tokenizer)",
		c.stageName(), what, info.Tokenizer, info.VocabSize, arch.Vocab)
}

func loadWeights(rc *pipeline.RunContext, cfg Config) (*weights.Set, error) {
	art, err := rc.Input(WeightsInput)
	if err != nil {
		return nil, err
	}
	p, err := art.Path(modelspec.WeightsFile)
	if err != nil {
		return nil, err
	}
	set, err := weights.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if set.Arch.Variant != cfg.Variant || set.Arch.Profile != cfg.Profile || set.Arch.Context != cfg.Context {
		return nil, fmt.Errorf("%s: the weights input is %s/%s at context %d, not %s/%s at context %d as claimed",
			cfg.stageName(), set.Arch.Variant, set.Arch.Profile, set.Arch.Context, cfg.Variant, cfg.Profile, cfg.Context)
	}
	return set, nil
}

func run(rc *pipeline.RunContext, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	ds, err := shards.OpenInput(rc, shards.Input)
	if err != nil {
		return err
	}
	defer ds.Close()
	if err := cfg.checkHeldOut(ds.Info()); err != nil {
		return err
	}
	set, err := loadWeights(rc, cfg)
	if err != nil {
		return err
	}
	if err := cfg.checkVocab(ds.Info(), set.Arch); err != nil {
		return err
	}
	if cfg.RopeScaling != "" && set.Arch.Rotation != modelspec.RotationRoPE {
		return fmt.Errorf("%s: rope scaling %s needs a rope model, but the weights input's rotation is %q; evaluate extensions of rope variants only", cfg.stageName(), cfg.RopeScaling, set.Arch.Rotation)
	}
	start := time.Now()
	res, tokens, err := evaluate(rc, cfg, set, ds)
	if err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(rc.OutDir, ResultFile), res); err != nil {
		return err
	}
	sec := time.Since(start).Seconds()
	return writeJSON(filepath.Join(rc.OutDir, SpeedFile), map[string]float64{"seconds": sec, "tokens": float64(tokens), "tokens_per_second": float64(tokens) / sec})
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

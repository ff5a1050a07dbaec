// Package export turns a trained routebench model into a directory that
// PyTorch loads without routebench's code: model.safetensors (every
// tensor under the name and in the layout of interop/torch/model.py's
// state_dict, torch.go), config.json (model_type, the tokenizer, the
// variant and every architectural fact a forward pass needs, including the
// derived ones an implementer would otherwise recompute: ALiBi slopes, RoPE
// frequencies, epsilons, KERPLE's floor) and, unless asked not to,
// reference.safetensors (held-out windows and the native evaluator's
// log-probs on them), against which a port checks itself. All three name
// the weights by one digest, so a reference scored with other weights is
// told apart. docs/interop.md documents the files.
//
// A directory is written whole or not at all: the files go into a
// temporary directory beside it, which is renamed into place, so a failed
// or interrupted export leaves the previous export as it was and never a
// mix of two. An existing export of other weights is replaced only when
// asked (Options.Force).
//
// No pipeline stage imports this package: exporting reads a cached train
// stage and changes no key.
package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"routebench/interop/safetensors"
	"routebench/model/nativeeval"
	"routebench/modelspec"
	"routebench/modelspec/weights"
	"routebench/stages/tokenize/shards"
)

// File names in an export directory.
const (
	ModelFile     = "model.safetensors"
	ConfigFile    = "config.json"
	ReferenceFile = "reference.safetensors"
)

// Format names this layout (config.json's routebench_format and the
// safetensors metadata's); a change of names, layouts or meanings bumps it.
// Version 2: state_dict names and nn.Linear layouts, the tokenizer, the
// weights digest.
const Format = "routebench-export/2"

// ModelType is config.json's model_type, the Hugging Face convention for
// naming the architecture a config describes.
const ModelType = "routebench"

// SafetensorsFormat is the metadata's "format": "pt", the value Hugging
// Face's loaders require of a PyTorch file. Ours sits beside it under
// routebench_format.
const SafetensorsFormat = "pt"

// Config is config.json: the arch exactly as the weights file records it
// (its fields at the top level) plus the facts the forward pass uses that
// the arch leaves implicit, so a port needs no routebench source.
type Config struct {
	ModelType string `json:"model_type"`
	Format    string `json:"routebench_format"`
	modelspec.Arch
	// Tokenizer: how text becomes the ids the model reads.
	Tokenizer Tokenizer `json:"tokenizer"`
	DHead     int       `json:"d_head"`
	// Pairs is P = d_head/2: rotation pairs per head, dims 2p and 2p+1.
	Pairs int `json:"rotation_pairs"`
	// PairLayout: pairs are interleaved (dims 2p, 2p+1), not split halves.
	PairLayout string `json:"pair_layout"`
	// Activation: the MLP's GELU, tanh form.
	Activation string `json:"activation"`
	// AttentionScale multiplies q.k (and PaTH's gate term): 1/sqrt(d_head).
	AttentionScale float64 `json:"attention_scale"`
	// RopeFrequencies theta_p = rope_base^(-2p/d_head) (rope only).
	RopeFrequencies []float64 `json:"rope_frequencies,omitempty"`
	// ALiBiSlopes m_h, head h's bias -m_h (i-j) (alibi variants only).
	ALiBiSlopes []float64 `json:"alibi_slopes,omitempty"`
	// AngleReduction: how accumulated angles and RoPE's i*theta are summed
	// and reduced before cos/sin (rotation variants only).
	AngleReduction string `json:"angle_reduction,omitempty"`
	// PathNormEps is the L2-normalisation epsilon of PaTH's w_t.
	PathNormEps float64 `json:"path_norm_eps,omitempty"`
	// GateAccumulation: how PaTH-FoX's gate prefix sums are kept (path-fox
	// only); in float32 they drift by 1e-5 nats a token within 512 tokens.
	GateAccumulation string `json:"gate_accumulation,omitempty"`
	// KerpleEps is the floor of KERPLE's p_h and a_h (kerple_log only): the
	// bias -max(p, eps) log(1 + max(a, eps) (i-j)) uses it whatever the
	// stored kerple_p and kerple_a hold, which may lie below it. p and a
	// are trained tensors in model.safetensors, not derived facts, so
	// unlike ALiBi's slopes only the floor is here.
	KerpleEps float64 `json:"kerple_eps,omitempty"`
	// TensorLayout: how the safetensors tensors are named and laid out.
	TensorLayout string `json:"tensor_layout"`
	// WeightsSHA256 is the SHA-256 of model.safetensors' data section (the
	// bytes after its header): the weights, under their names and layouts.
	// The file's metadata and reference.safetensors' carry it too.
	WeightsSHA256 string `json:"weights_sha256"`
	// Source: where the weights came from.
	Source Source `json:"source"`
}

// Source records the cached stage an export was read from.
type Source struct {
	Stage  string           `json:"stage"`  // e.g. train/rope
	Digest string           `json:"digest"` // the artifact's content digest in the store
	Train  modelspec.Config `json:"train"`  // train.json's config: steps, seed, learning rate ...
}

// NewConfig derives config.json from a weights set, its tokenizer and its
// source; the weights digest is filled in by Write.
func NewConfig(set *weights.Set, tok Tokenizer, src Source) (Config, error) {
	a := set.Arch
	if err := a.Validate(); err != nil {
		return Config{}, fmt.Errorf("export %s: %w", src.Stage, err)
	}
	if tok.VocabSize != a.Vocab {
		return Config{}, fmt.Errorf("export %s: the tokenizer %q has %d ids, the model %d: export with the train stage's own tokenize stage", src.Stage, tok.Kind, tok.VocabSize, a.Vocab)
	}
	d := a.DHead()
	c := Config{
		ModelType: ModelType, Format: Format, Arch: a, Tokenizer: tok, DHead: d, Pairs: d / 2, PairLayout: "interleaved",
		Activation: "gelu_tanh", AttentionScale: 1 / math.Sqrt(float64(d)),
		TensorLayout: "float32, row-major, under interop/torch/model.py's state_dict names; linear maps as nn.Linear's weight [out, in] (y = x W^T + b), " +
			"their biases as its bias (interop/export/torch.go maps modelspec/weights/ARCHITECTURE.md's names)",
		Source: src,
	}
	if a.Rotation == modelspec.RotationRoPE {
		c.RopeFrequencies = modelspec.RopeFrequencies(d, a.RopeBase)
	}
	if a.ALiBi {
		c.ALiBiSlopes = modelspec.ALiBiSlopes(a.Heads)
	}
	if a.Rotation != modelspec.RotationNone {
		c.AngleReduction = "float64; accumulated prefix sums (token itself included) reduced to [-pi, pi] by IEEE remainder mod 2 pi after every token, rope's i*theta likewise before cos/sin"
	}
	if a.Householder {
		c.PathNormEps = modelspec.PathNormEps
	}
	if a.ForgetGate {
		c.GateAccumulation = "float64: logsigmoid of the float32 pre-activation, prefix sums and (G_i - G_j) / sqrt(d) in float64, rounded to float32 once"
	}
	if a.KerpleLog {
		c.KerpleEps = modelspec.KerpleEps
	}
	return c, nil
}

// ReferenceSpec asks for reference.safetensors: Windows held-out windows of
// Len tokens drawn from Data's held-out split with Seed, as the evaluate
// stage draws them.
type ReferenceSpec struct {
	Data         *shards.Dataset
	Seed         uint64
	Windows, Len int
}

// Options are an export's choices beyond the weights.
type Options struct {
	Tokenizer Tokenizer
	// Reference: nil writes no reference.safetensors (and an old one is
	// gone with the rest of the old directory).
	Reference *ReferenceSpec
	// Force replaces an export of other weights; without it that is an
	// error. An export of the same weights is always replaced.
	Force bool
}

// Result says what Write did.
type Result struct {
	// Replaced: dir held an export before, now replaced.
	Replaced bool
	// ReplacedOther: that export held other weights (Force was set).
	ReplacedOther bool
	WeightsSHA256 string
}

// Write exports set into dir. The files are written into a temporary
// directory beside dir and renamed into place as a whole; on any error
// dir is as it was.
func Write(ctx context.Context, dir string, set *weights.Set, src Source, o Options) (Result, error) {
	fail := func(err error) (Result, error) {
		return Result{}, fmt.Errorf("export %s to %s: %w", src.Stage, dir, err)
	}
	cfg, err := NewConfig(set, o.Tokenizer, src)
	if err != nil {
		return Result{}, err
	}
	ts, err := TorchTensors(set)
	if err != nil {
		return fail(err)
	}
	meta := map[string]string{"format": SafetensorsFormat, "routebench_format": Format, "variant": set.Arch.Variant, "stage": src.Stage}
	model, digest, err := encodeWithDigest(ts, meta)
	if err != nil {
		return fail(err)
	}
	cfg.WeightsSHA256 = digest
	cj, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fail(fmt.Errorf("encoding %s: %w", ConfigFile, err))
	}
	res := Result{WeightsSHA256: digest}
	if res.Replaced, res.ReplacedOther, err = checkTarget(dir, digest, o.Force); err != nil {
		return fail(err)
	}
	files := map[string][]byte{ModelFile: model, ConfigFile: append(cj, '\n')}
	if o.Reference != nil {
		ref, err := reference(ctx, set, o.Reference, digest)
		if err != nil {
			return fail(err)
		}
		files[ReferenceFile] = ref
	}
	if err := publish(dir, files, res.Replaced); err != nil {
		return fail(err)
	}
	return res, nil
}

// encodeWithDigest writes ts as safetensors with meta plus
// weights_sha256, the SHA-256 of the data section. The data section does
// not depend on the header (tensors in name order, raw bytes), so it is
// encoded once without the digest to hash it.
func encodeWithDigest(ts []safetensors.Tensor, meta map[string]string) ([]byte, string, error) {
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, ts, meta); err != nil {
		return nil, "", err
	}
	body, err := safetensors.DataSection(buf.Bytes())
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(body)
	digest := hex.EncodeToString(sum[:])
	withDigest := map[string]string{"weights_sha256": digest}
	for k, v := range meta {
		withDigest[k] = v
	}
	buf.Reset()
	if err := safetensors.Write(&buf, ts, withDigest); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), digest, nil
}

// reference scores the spec's windows with the native evaluator and
// encodes reference.safetensors: "tokens" I32 [n, L+1] (inputs are [:, :L],
// targets [:, 1:]) and "logprobs" F64 [n, L], log p(target_i | tokens_0..i)
// in nats; its metadata names the weights they were scored with.
func reference(ctx context.Context, set *weights.Set, r *ReferenceSpec, digest string) ([]byte, error) {
	n, L := r.Windows, r.Len
	if n <= 0 || L <= 0 {
		return nil, fmt.Errorf("reference: %d windows of %d tokens; ask for at least one window of at least one token", n, L)
	}
	if info := r.Data.Info(); info.VocabSize != set.Arch.Vocab {
		return nil, fmt.Errorf("reference: the shards have vocabulary %d, the model %d: export with the train stage's own tokenize stage", info.VocabSize, set.Arch.Vocab)
	}
	ws, err := r.Data.EvalWindows(r.Seed, L, n)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	m, err := nativeeval.Load(set)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	tokens := make([]int32, 0, n*(L+1))
	lps := make([]float64, 0, n*L)
	for _, w := range ws {
		res, err := m.LogProbs(ctx, w[:L], w[1:], nativeeval.Options{})
		if err != nil {
			return nil, fmt.Errorf("reference: scoring a window of %d tokens: %w", L, err)
		}
		tokens = append(tokens, w...)
		lps = append(lps, res.LogProbs...)
	}
	meta := map[string]string{"format": SafetensorsFormat, "routebench_format": Format, "variant": set.Arch.Variant,
		"weights_sha256": digest, "split": shards.SplitHeldOut, "seed": strconv.FormatUint(r.Seed, 10), "scorer": "routebench model/nativeeval"}
	var buf bytes.Buffer
	err = safetensors.Write(&buf, []safetensors.Tensor{
		{Name: "tokens", Shape: []int{n, L + 1}, Dtype: safetensors.I32, I32: tokens},
		{Name: "logprobs", Shape: []int{n, L}, Dtype: safetensors.F64, F64: lps},
	}, meta)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	return buf.Bytes(), nil
}

// Package export turns a trained routebench model into files the field's
// own tools load: model.safetensors (every tensor of the weights file,
// under the names and in the layouts of modelspec/weights/ARCHITECTURE.md),
// config.json (the variant and every architectural fact a forward pass
// needs, including the derived ones an implementer would otherwise have to
// recompute: ALiBi slopes, RoPE frequencies, epsilons, KERPLE's floor) and,
// on request, reference.safetensors (held-out windows and the native
// evaluator's log-probs on them), against which a port can check itself.
// interop/torch/model.py is such a port; docs/interop.md documents the files.
//
// No pipeline stage imports this package: exporting reads a cached train
// stage and changes no key.
package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
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

// Format names this layout in config.json and in the safetensors metadata;
// a change of names, layouts or meanings bumps it.
const Format = "routebench-export/1"

// Config is config.json: the arch exactly as the weights file records it
// (its fields at the top level) plus the facts the forward pass uses that
// the arch leaves implicit, so a port needs no routebench source.
type Config struct {
	Format string `json:"format"`
	modelspec.Arch
	DHead int `json:"d_head"`
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
	// KerpleEps is the floor of KERPLE's p_h and a_h (kerple_log only): the
	// bias -max(p, eps) log(1 + max(a, eps) (i-j)) uses it whatever the
	// stored kerple_p and kerple_a hold, which may lie below it. p and a
	// are trained tensors in model.safetensors, not derived facts, so
	// unlike ALiBi's slopes only the floor is here.
	KerpleEps float64 `json:"kerple_eps,omitempty"`
	// TensorLayout: how the safetensors tensors are laid out.
	TensorLayout string `json:"tensor_layout"`
	// Source: where the weights came from.
	Source Source `json:"source"`
}

// Source records the cached stage an export was read from.
type Source struct {
	Stage  string           `json:"stage"`  // e.g. train/rope
	Digest string           `json:"digest"` // the artifact's content digest in the store
	Train  modelspec.Config `json:"train"`  // train.json's config: steps, seed, learning rate ...
}

// NewConfig derives config.json from a weights set and its source.
func NewConfig(set *weights.Set, src Source) (Config, error) {
	a := set.Arch
	if err := a.Validate(); err != nil {
		return Config{}, fmt.Errorf("export %s: %w", src.Stage, err)
	}
	d := a.DHead()
	c := Config{
		Format: Format, Arch: a, DHead: d, Pairs: d / 2, PairLayout: "interleaved",
		Activation: "gelu_tanh", AttentionScale: 1 / math.Sqrt(float64(d)),
		TensorLayout: "float32, row-major, names and shapes of modelspec/weights/ARCHITECTURE.md; linear maps are [in, out] (y = x W)",
		Source:       src,
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
	if a.KerpleLog {
		c.KerpleEps = modelspec.KerpleEps
	}
	return c, nil
}

// Write exports set into dir (created if needed): model.safetensors and
// config.json. Files are written beside their final names and renamed, so a
// failed export never leaves a half-written file under a final name.
func Write(dir string, set *weights.Set, src Source) error {
	cfg, err := NewConfig(set, src)
	if err != nil {
		return err
	}
	cj, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("export %s: encoding %s: %w", src.Stage, ConfigFile, err)
	}
	ts := make([]safetensors.Tensor, len(set.Tensors))
	for i, t := range set.Tensors {
		ts[i] = safetensors.Tensor{Name: t.Name, Shape: t.Shape, Dtype: safetensors.F32, F32: t.Data}
	}
	meta := map[string]string{"format": Format, "variant": set.Arch.Variant, "stage": src.Stage}
	var st bytes.Buffer
	if err := safetensors.Write(&st, ts, meta); err != nil {
		return fmt.Errorf("export %s: %w", src.Stage, err)
	}
	if err := writeFiles(dir, map[string][]byte{ModelFile: st.Bytes(), ConfigFile: append(cj, '\n')}); err != nil {
		return fmt.Errorf("export %s: %w", src.Stage, err)
	}
	return nil
}

// Reference scores n held-out windows of L tokens (drawn from ds's
// held-out split with seed, as the evaluate stage draws them) with the
// native evaluator and writes reference.safetensors into dir: "tokens" I32
// [n, L+1] (inputs are [:, :L], targets [:, 1:]) and "logprobs" F64 [n, L],
// log p(target_i | tokens_0..i) in nats.
func Reference(ctx context.Context, dir string, set *weights.Set, ds *shards.Dataset, seed uint64, n, L int) error {
	if n <= 0 || L <= 0 {
		return fmt.Errorf("export reference: %d windows of %d tokens; ask for at least one window of at least one token", n, L)
	}
	if info := ds.Info(); info.VocabSize != set.Arch.Vocab {
		return fmt.Errorf("export reference: the shards have vocabulary %d, the model %d: export with the train stage's own tokenize stage", info.VocabSize, set.Arch.Vocab)
	}
	ws, err := ds.EvalWindows(seed, L, n)
	if err != nil {
		return fmt.Errorf("export reference: %w", err)
	}
	m, err := nativeeval.Load(set)
	if err != nil {
		return fmt.Errorf("export reference: %w", err)
	}
	tokens := make([]int32, 0, n*(L+1))
	lps := make([]float64, 0, n*L)
	for _, w := range ws {
		res, err := m.LogProbs(ctx, w[:L], w[1:], nativeeval.Options{})
		if err != nil {
			return fmt.Errorf("export reference: scoring a window of %d tokens: %w", L, err)
		}
		tokens = append(tokens, w...)
		lps = append(lps, res.LogProbs...)
	}
	meta := map[string]string{"format": Format, "variant": set.Arch.Variant, "split": shards.SplitHeldOut,
		"seed": strconv.FormatUint(seed, 10), "scorer": "routebench model/nativeeval"}
	var buf bytes.Buffer
	err = safetensors.Write(&buf, []safetensors.Tensor{
		{Name: "tokens", Shape: []int{n, L + 1}, Dtype: safetensors.I32, I32: tokens},
		{Name: "logprobs", Shape: []int{n, L}, Dtype: safetensors.F64, F64: lps},
	}, meta)
	if err != nil {
		return fmt.Errorf("export reference: %w", err)
	}
	if err := writeFiles(dir, map[string][]byte{ReferenceFile: buf.Bytes()}); err != nil {
		return fmt.Errorf("export reference: %w", err)
	}
	return nil
}

func writeFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	return nil
}

package model

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/model/weights"
)

// configFromArch recovers the forward-relevant config of a weights file.
func configFromArch(a weights.Arch) (Config, error) {
	if err := a.Validate(); err != nil {
		return Config{}, err
	}
	v, err := LookupVariant(a.Variant)
	if err != nil {
		return Config{}, err
	}
	if v.Rotation != a.Rotation || v.ValueRot != a.ValueRot || v.ALiBi != a.ALiBi {
		return Config{}, fmt.Errorf("model: weights arch (rotation %q, value_rot %v, alibi %v) does not match variant %q",
			a.Rotation, a.ValueRot, a.ALiBi, a.Variant)
	}
	if a.NormEps != NormEps || a.RopeBase != RopeBase {
		return Config{}, fmt.Errorf("model: weights use norm_eps %g, rope_base %g; this build implements %g, %g",
			a.NormEps, a.RopeBase, NormEps, RopeBase)
	}
	return Config{Variant: a.Variant, Profile: a.Profile, Vocab: a.Vocab, DModel: a.DModel, Layers: a.Layers,
		Heads: a.Heads, DHidden: a.DHidden, Context: a.Context, Backend: "go"}, nil
}

// Forward runs the gomlx forward pass of exported weights on one window
// and returns logits [len(tokens)][Vocab]. Rotations come from the host
// float64 path for every variant (including learned ones: their table is
// fixed once exported), the same path the native evaluator implements.
// Memory is O(H L^2): meant for cross-checks, not for long contexts (see
// LogProbsBlockwise).
func Forward(set *weights.Set, tokens []int32) (logits [][]float32, err error) {
	if set == nil || len(tokens) == 0 {
		return nil, fmt.Errorf("model: Forward needs weights and at least one token")
	}
	L := len(tokens)
	flat, c, err := runExported(set, tokens, "", "Forward", nil,
		func(n net, p map[string]*Node, tok *Node, rot *rotation, _ []*Node) *Node {
			bias := Const(tok.Graph(), tensors.FromFlatDataAndDimensions(attentionBias(n.H, L, n.v.ALiBi), n.H, L, L))
			return n.logits(p, tok, rot, bias)
		})
	if err != nil {
		return nil, err
	}
	logits = make([][]float32, L)
	for i := range logits {
		logits[i] = flat[i*c.Vocab : (i+1)*c.Vocab]
		for _, x := range logits[i] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("model: Forward: non-finite logit at position %d (%s/%s weights)", i, c.Profile, c.Variant)
			}
		}
	}
	return logits, nil
}

// runExported builds and runs one graph on exported weights and one window,
// on backend (empty: "go"), and returns its single output flattened, with
// the weights' config. build gets the parameters by name, the tokens
// [1, L] (int32), the host rotation (cos and sin [1, L, H, d]; nil for
// variants without one) and the extra inputs, in order. name is the
// caller's, for errors.
func runExported(set *weights.Set, tokens []int32, backend, name string, extra []*tensors.Tensor,
	build func(n net, p map[string]*Node, tok *Node, rot *rotation, extra []*Node) *Node) ([]float32, Config, error) {
	c, err := configFromArch(set.Arch)
	if err != nil {
		return nil, c, err
	}
	if backend != "" {
		c.Backend = backend
	}
	for i, x := range tokens {
		if x < 0 || int(x) >= c.Vocab {
			return nil, c, fmt.Errorf("model: %s: token %d at position %d is outside vocabulary [0, %d)", name, x, i, c.Vocab)
		}
	}
	n := newNet(c)
	specs := paramSpecs(c)
	var inputs []any
	for _, s := range specs {
		data, err := set.Get(s.Name, s.Shape...)
		if err != nil {
			return nil, c, err
		}
		inputs = append(inputs, tensors.FromFlatDataAndDimensions(data, s.Shape...))
	}
	L := len(tokens)
	inputs = append(inputs, tensors.FromFlatDataAndDimensions(append([]int32(nil), tokens...), 1, L))
	var table []float32
	if n.v.Rotation == RotationAccumulated {
		if table, err = set.Get("angles", c.Vocab, c.Heads, n.P); err != nil {
			return nil, c, err
		}
	}
	cos, sin, err := hostRotation(c, table, tokens, 1, L)
	if err != nil {
		return nil, c, err
	}
	hasRot := cos != nil
	if hasRot {
		inputs = append(inputs, tensors.FromFlatDataAndDimensions(cos, 1, L, n.H, n.d),
			tensors.FromFlatDataAndDimensions(sin, 1, L, n.H, n.d))
	}
	for _, x := range extra {
		inputs = append(inputs, x)
	}
	b, err := NewBackend(c.Backend)
	if err != nil {
		return nil, c, err
	}
	var flat []float32
	err = catch(fmt.Sprintf("%s of %s/%s weights on %d tokens", name, c.Profile, c.Variant, L), func() error {
		exec, err := NewExec(b, func(in []*Node) *Node {
			p := map[string]*Node{}
			for i, s := range specs {
				p[s.Name] = in[i]
			}
			i := len(specs) + 1
			var rot *rotation
			if hasRot {
				rot = &rotation{cos: in[i], sin: in[i+1]}
				i += 2
			}
			return build(n, p, in[len(specs)], rot, in[i:])
		})
		if err != nil {
			return err
		}
		defer exec.Finalize()
		out, err := exec.Exec(inputs...)
		if err != nil {
			return err
		}
		flat, err = tensors.CopyFlatData[float32](out[0])
		out[0].FinalizeAll()
		return err
	})
	return flat, c, err
}

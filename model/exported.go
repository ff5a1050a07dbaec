package model

import (
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/modelspec"
	"routebench/modelspec/weights"
)

// The glue that runs a graph of this package's network on exported weights,
// for the evaluators of model/gomlxeval (Forward, LogProbsBlockwise) and
// this package's tests. The evaluators' own graphs live there, outside the
// training key.

// configFromArch recovers the forward-relevant config of a weights file.
func configFromArch(a modelspec.Arch) (Config, error) {
	if err := a.Validate(); err != nil {
		return Config{}, err
	}
	v, err := modelspec.LookupVariant(a.Variant)
	if err != nil {
		return Config{}, err
	}
	if v.Rotation != a.Rotation || v.ValueRot != a.ValueRot || v.ALiBi != a.ALiBi || v.KerpleLog != a.KerpleLog || v.AngleProj != a.AngleProj {
		return Config{}, fmt.Errorf("model: weights arch (rotation %q, value_rot %v, alibi %v, kerple_log %v, angle_proj %v) does not match variant %q",
			a.Rotation, a.ValueRot, a.ALiBi, a.KerpleLog, a.AngleProj, a.Variant)
	}
	if a.NormEps != modelspec.NormEps || a.RopeBase != modelspec.RopeBase {
		return Config{}, fmt.Errorf("model: weights use norm_eps %g, rope_base %g; this build implements %g, %g",
			a.NormEps, a.RopeBase, modelspec.NormEps, modelspec.RopeBase)
	}
	return Config{Variant: a.Variant, Profile: a.Profile, Vocab: a.Vocab, DModel: a.DModel, Layers: a.Layers,
		Heads: a.Heads, DHidden: a.DHidden, Context: a.Context, Backend: "go"}, nil
}

// RunExported builds and runs one graph on exported weights and one window,
// on backend (empty: "go"), and returns its single output flattened, with
// the weights' config. build gets the parameters by name, the tokens
// [1, L] (int32), the host rotation (cos and sin [1, L, H, d]; nil for
// variants without one) and the extra inputs, in order. name is the
// caller's, for errors.
func RunExported(set *weights.Set, tokens []int32, backend, name string, extra []*tensors.Tensor,
	build func(w Network, p map[string]*Node, tok *Node, rot *Rotation, extra []*Node) *Node) ([]float32, Config, error) {
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
	if n.v.HasAngleTable() {
		if table, err = set.Get("angles", c.Vocab, c.Heads, n.P); err != nil {
			return nil, c, err
		}
	}
	cos, sin, err := modelspec.RotationCosSin(c, table, tokens, 1, L)
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
			var rot *Rotation
			if hasRot {
				rot = &Rotation{Cos: in[i], Sin: in[i+1]}
				i += 2
			}
			return build(Network{n}, p, in[len(specs)], rot, in[i:])
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

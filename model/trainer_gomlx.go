package model

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/modelspec"
)

// trainer holds the compiled step and eval graphs and the device-side state
// (parameters and Adam moments) of one run. The graphs are plain functions
// of their inputs (no gomlx context), so the whole state is the three
// tensor lists plus the step number: that is what a checkpoint stores.
type trainer struct {
	c       Config
	n       net
	specs   []paramSpec
	backend backends.Backend
	hostRot bool      // rope and random-*: cos/sin computed on the host per batch
	table   []float32 // fixed angle table of random-* variants
	step    *Exec
	eval    *Exec

	params, m, v []*tensors.Tensor
}

func newTrainer(c Config) (*trainer, error) {
	b, err := NewBackend(c.Backend)
	if err != nil {
		return nil, err
	}
	n := newNet(c)
	tr := &trainer{c: c, n: n, specs: paramSpecs(c), backend: b, table: fixedAngles(c),
		hostRot: n.v.HostRotation()}
	err = catch("compiling "+c.Variant, func() error {
		var err error
		if tr.step, err = NewExec(b, tr.stepGraph); err != nil {
			return err
		}
		tr.eval, err = NewExec(b, tr.evalGraph)
		return err
	})
	if err != nil {
		return nil, err
	}
	return tr, nil
}

// inputs layout of both graphs after the parameters: tokens, targets, then
// cos, sin when hostRot.
func (tr *trainer) batchNodes(in []*Node) (tok, tgt *Node, rot *rotation, rest []*Node) {
	tok, tgt, rest = in[0], in[1], in[2:]
	if tr.hostRot {
		rot = &rotation{cos: rest[0], sin: rest[1]}
		rest = rest[2:]
	}
	return
}

func (tr *trainer) loss(params []*Node, tok, tgt *Node, rot *rotation) *Node {
	p := make(map[string]*Node, len(params))
	for i, s := range tr.specs {
		p[s.Name] = params[i]
	}
	T := tok.Shape().Dimensions[1]
	bias := Const(tok.Graph(), tensors.FromFlatDataAndDimensions(attentionBias(tr.n.H, T, tr.n.v.ALiBi), tr.n.H, T, T))
	return meanNLL(tr.n.logits(p, tok, rot, bias), tgt)
}

// stepGraph: inputs params, m, v (k each), tokens, targets, [cos, sin], lr,
// bc1, bc2; outputs params, m, v, loss, pre-clip gradient norm.
func (tr *trainer) stepGraph(in []*Node) []*Node {
	k := len(tr.specs)
	params, m, v := in[:k], in[k:2*k], in[2*k:3*k]
	tok, tgt, rot, rest := tr.batchNodes(in[3*k:])
	lr, bc1, bc2 := rest[0], rest[1], rest[2]
	loss := tr.loss(params, tok, tgt, rot)
	grads := Gradient(loss, params...)
	np, nm, nv, gnorm := adamW(tr.specs, params, m, v, grads, lr, bc1, bc2, tr.c.WeightDecay, tr.c.Clip)
	out := append(append(append([]*Node{}, np...), nm...), nv...)
	return append(out, loss, gnorm)
}

// evalGraph: inputs params, tokens, targets, [cos, sin]; output mean loss.
func (tr *trainer) evalGraph(in []*Node) *Node {
	k := len(tr.specs)
	tok, tgt, rot, _ := tr.batchNodes(in[k:])
	return tr.loss(in[:k], tok, tgt, rot)
}

// batchInputs turns one batch into graph inputs (tokens, targets, [cos, sin]).
func (tr *trainer) batchInputs(tokens, targets []int32, B, T int) ([]any, error) {
	c := tr.c
	if len(tokens) != B*T || len(targets) != B*T {
		return nil, fmt.Errorf("got %d inputs and %d targets, want %d x %d", len(tokens), len(targets), B, T)
	}
	for i := range tokens {
		if tokens[i] < 0 || int(tokens[i]) >= c.Vocab || targets[i] < 0 || int(targets[i]) >= c.Vocab {
			return nil, fmt.Errorf("token %d / target %d at position %d is outside vocabulary [0, %d)", tokens[i], targets[i], i, c.Vocab)
		}
	}
	in := []any{tensors.FromFlatDataAndDimensions(tokens, B, T), tensors.FromFlatDataAndDimensions(targets, B, T)}
	if tr.hostRot {
		cos, sin, err := modelspec.RotationCosSin(c, tr.table, tokens, B, T)
		if err != nil {
			return nil, err
		}
		in = append(in, tensors.FromFlatDataAndDimensions(cos, B, T, tr.n.H, tr.n.d),
			tensors.FromFlatDataAndDimensions(sin, B, T, tr.n.H, tr.n.d))
	}
	return in, nil
}

// runStep does one optimizer step s and returns loss and gradient norm.
func (tr *trainer) runStep(s int, tokens, targets []int32) (loss, gnorm float32, err error) {
	c := tr.c
	bin, err := tr.batchInputs(tokens, targets, c.Batch, c.Context)
	if err != nil {
		return 0, 0, fmt.Errorf("model: %s step %d: batch: %w", c.Variant, s, err)
	}
	lr, bc1, bc2 := stepScalars(c, s)
	args := make([]any, 0, 3*len(tr.specs)+len(bin)+3)
	for _, list := range [][]*tensors.Tensor{tr.params, tr.m, tr.v} {
		for _, t := range list {
			args = append(args, t)
		}
	}
	args = append(args, bin...)
	args = append(args, tensors.FromScalar(lr), tensors.FromScalar(bc1), tensors.FromScalar(bc2))
	err = catch(fmt.Sprintf("%s training step %d", c.Variant, s), func() error {
		out, err := tr.step.Exec(args...)
		if err != nil {
			return err
		}
		k := len(tr.specs)
		old := [][]*tensors.Tensor{tr.params, tr.m, tr.v}
		tr.params, tr.m, tr.v = out[:k], out[k:2*k], out[2*k:3*k]
		for _, list := range old {
			for _, t := range list {
				t.FinalizeAll()
			}
		}
		loss = tensors.ToScalar[float32](out[3*k])
		gnorm = tensors.ToScalar[float32](out[3*k+1])
		out[3*k].FinalizeAll()
		out[3*k+1].FinalizeAll()
		return nil
	})
	return loss, gnorm, err
}

// evalLoss is heldOutLoss over the gomlx evaluation graph.
func (tr *trainer) evalLoss(windows [][]int32) (float64, error) {
	c := tr.c
	return heldOutLoss(c, windows, func(tok, tgt []int32) (float32, error) {
		bin, err := tr.batchInputs(tok, tgt, c.Batch, c.Context)
		if err != nil {
			return 0, err
		}
		args := make([]any, 0, len(tr.params)+len(bin))
		for _, t := range tr.params {
			args = append(args, t)
		}
		args = append(args, bin...)
		var l float32
		err = catch(c.Variant+" held-out loss", func() error {
			out, err := tr.eval.Exec(args...)
			if err != nil {
				return err
			}
			l = tensors.ToScalar[float32](out[0])
			out[0].FinalizeAll()
			return nil
		})
		return l, err
	})
}

// setState uploads host values (initial or from a checkpoint).
func (tr *trainer) setState(params, m, v [][]float32) {
	up := func(vals [][]float32) []*tensors.Tensor {
		out := make([]*tensors.Tensor, len(vals))
		for i, x := range vals {
			out[i] = tensors.FromFlatDataAndDimensions(append([]float32(nil), x...), tr.specs[i].Shape...)
		}
		return out
	}
	tr.params, tr.m, tr.v = up(params), up(m), up(v)
}

// state downloads parameters and moments.
func (tr *trainer) state() (params, m, v [][]float32, err error) {
	err = catch(tr.c.Variant+" reading state", func() error {
		down := func(ts []*tensors.Tensor) ([][]float32, error) {
			out := make([][]float32, len(ts))
			for i, t := range ts {
				x, err := tensors.CopyFlatData[float32](t)
				if err != nil {
					return nil, err
				}
				out[i] = x
			}
			return out, nil
		}
		var err error
		if params, err = down(tr.params); err != nil {
			return err
		}
		if m, err = down(tr.m); err != nil {
			return err
		}
		v, err = down(tr.v)
		return err
	})
	return
}

func (tr *trainer) close() {
	for _, list := range [][]*tensors.Tensor{tr.params, tr.m, tr.v} {
		for _, t := range list {
			t.FinalizeAll()
		}
	}
	if tr.step != nil {
		tr.step.Finalize()
	}
	if tr.eval != nil {
		tr.eval.Finalize()
	}
}

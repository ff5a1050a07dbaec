package model

import (
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified

	"routebench/modelspec"
)

// Network exposes the pieces of the forward graph (graph.go) to the gomlx
// evaluators of package model/gomlxeval. They live outside this package on
// purpose: the train stage's cache key covers this package's source, so an
// evaluator kept here re-keyed (and retrained) every model whenever it was
// edited. The pieces are the very functions training uses, not copies.
type Network struct{ n net }

// Rotation is cos and sin of psi, [..., H, d], each pair's value on both of
// its dims (2p, 2p+1); the host computes it (HostRotation).
type Rotation struct{ Cos, Sin *Node }

func (r *Rotation) internal() *rotation {
	if r == nil {
		return nil
	}
	return &rotation{cos: r.Cos, sin: r.Sin}
}

// Config is the network's training config.
func (w Network) Config() Config { return w.n.c }

// Variant is the network's registry entry.
func (w Network) Variant() modelspec.Variant { return w.n.v }

// Heads and DHead are the attention shape.
func (w Network) Heads() int { return w.n.H }
func (w Network) DHead() int { return w.n.d }

// Logits is the full-attention forward: [B, T, V] for tokens [B, T]; bias
// is [H, T, T] (AttentionBias).
func (w Network) Logits(p map[string]*Node, tokens *Node, rot *Rotation, bias *Node) *Node {
	return w.n.logits(p, tokens, rot.internal(), bias)
}

// Embed, Norm, MLP, QKV and Output are one block's pieces, as Logits
// composes them: h += Output(attn(QKV(Norm(h, norm1)))); h += MLP(Norm(h, norm2)).
func (w Network) Embed(p map[string]*Node, tokens *Node) *Node { return w.n.embed(p, tokens) }
func (w Network) Norm(x, gain *Node) *Node                     { return w.n.norm(x, gain) }
func (w Network) MLP(l int, p map[string]*Node, m *Node) *Node { return w.n.mlp(l, p, m) }
func (w Network) QKV(l int, p map[string]*Node, a *Node, rot *Rotation) (q, k, v *Node) {
	return w.n.qkv(l, p, a, rot.internal())
}
func (w Network) Output(l int, p map[string]*Node, o *Node, rot *Rotation) *Node {
	return w.n.output(l, p, o, rot.internal())
}

// KerpleBias is block l's KERPLE bias [H, Tq, Tk] (Variant.KerpleLog) for
// the distances dist [Tq, Tk], i - j with 0 where j > i (masked by the
// causal bias): the evaluators add it to the scaled scores, as Logits does.
func (w Network) KerpleBias(l int, p map[string]*Node, dist *Node) *Node {
	return w.n.kerpleBias(l, p, dist)
}

// AttentionSoftmax is the attention softmax over the last axis.
func AttentionSoftmax(s *Node) *Node { return softmax(s) }

// Dense is x[..., K] times w[K, N].
func Dense(x, w *Node) *Node { return mm(x, w) }

// ConstLike converts a float32 constant to x's dtype.
func ConstLike(x, c *Node) *Node { return constLike(x, c) }

// BlockName is the tensor name of t in block l ("block000/wq").
func BlockName(l int, t string) string { return blockName(l, t) }

// MaskedLogit is the additive bias of a non-causal pair.
const MaskedLogit = maskedLogit

// AttentionBias is the host bias [H][L][L] (flattened): causal mask plus
// ALiBi's -m_h (i-j) when alibi is set.
func AttentionBias(H, L int, alibi bool) []float32 { return attentionBias(H, L, alibi) }

package model

import (
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/modelspec"
)

// net builds the forward graph of ARCHITECTURE.md for one config. Only ops
// whose gradients exist in simplego v0.26.0 are used: no Slice/Concatenate
// (their VJPs need Pad), no Rsqrt, no CumSum.
type net struct {
	c       Config
	v       Variant
	H, d, P int
}

func newNet(c Config) net {
	v, _ := modelspec.LookupVariant(c.Variant)
	d := c.DModel / c.Heads
	return net{c: c, v: v, H: c.Heads, d: d, P: d / 2}
}

// rotation holds cos and sin of psi, [B, T, H, d], each pair's value
// repeated on its two dims (2p, 2p+1).
type rotation struct{ cos, sin *Node }

// logits returns [B, T, V] for tokens [B, T] (int32). p maps tensor names to
// nodes; rot is the host-computed rotation (nil for none, or when the
// learned table is in p and the rotation is computed here); bias is
// [H, T, T] (causal mask, plus ALiBi); KERPLE's bias is built per block
// from its parameters (position_kerple.go).
func (n net) logits(p map[string]*Node, tokens *Node, rot *rotation, bias *Node) *Node {
	B, T := tokens.Shape().Dimensions[0], tokens.Shape().Dimensions[1]
	if n.v.Learned && rot == nil {
		rot = n.learnedRotation(p["angles"], tokens)
	}
	h := n.embed(p, tokens) // [B, T, D]
	for l := 0; l < n.c.Layers; l++ {
		a := n.norm(h, p[blockName(l, "norm1")])
		if n.v.AngleProj { // each block's own angles, from its input
			rot = n.projectedRotation(p[blockName(l, modelspec.AngleProjName)], a)
		}
		h = Add(h, n.attention(l, p, a, rot, bias, B, T))
		h = Add(h, n.mlp(l, p, n.norm(h, p[blockName(l, "norm2")])))
	}
	return mm(n.norm(h, p["normf"]), p["unembed"])
}

// embed looks up the token embeddings: [..., D] for tokens [...].
func (n net) embed(p map[string]*Node, tokens *Node) *Node {
	return Gather(p["embed"], InsertAxes(tokens, -1))
}

// norm is pre-norm RMSNorm with a gain [D] over the last axis.
func (n net) norm(x, gain *Node) *Node { return lastAxis(Mul, rmsNorm(x), gain) }

// mlp is block l's GELU MLP on the normed input m [..., D].
func (n net) mlp(l int, p map[string]*Node, m *Node) *Node {
	u := gelu(lastAxis(Add, mm(m, p[blockName(l, "w1")]), p[blockName(l, "b1")]))
	return lastAxis(Add, mm(u, p[blockName(l, "w2")]), p[blockName(l, "b2")])
}

// qkv projects the normed input a [..., D] of block l into queries, keys
// and values [..., H, d], rotated as the variant says (q, k by psi; v too
// under value transport).
func (n net) qkv(l int, p map[string]*Node, a *Node, rot *rotation) (q, k, v *Node) {
	dims := append(append([]int(nil), a.Shape().Dimensions[:a.Rank()-1]...), n.H, n.d)
	heads := func(w string) *Node { return Reshape(mm(a, p[blockName(l, w)]), dims...) }
	q, k, v = heads("wq"), heads("wk"), heads("wv")
	if rot != nil {
		q, k = rotate(q, rot.cos, rot.sin), rotate(k, rot.cos, rot.sin)
		if n.v.ValueRot {
			v = rotate(v, rot.cos, rot.sin)
		}
	}
	return q, k, v
}

// output un-rotates the attention output o [..., H, d] under value
// transport (R(-psi_i)) and applies block l's output projection.
func (n net) output(l int, p map[string]*Node, o *Node, rot *rotation) *Node {
	if rot != nil && n.v.ValueRot {
		o = rotate(o, rot.cos, Neg(rot.sin))
	}
	dims := append(append([]int(nil), o.Shape().Dimensions[:o.Rank()-2]...), n.H*n.d)
	return mm(Reshape(o, dims...), p[blockName(l, "wo")])
}

func (n net) attention(l int, p map[string]*Node, a *Node, rot *rotation, bias *Node, B, T int) *Node {
	q, k, v := n.qkv(l, p, a, rot)
	var s *Node // [B, H, Tq, Tk]
	if n.v.Householder {
		s = n.pathLogits(l, p, a, q, k) // householder_attention.go
	} else {
		s = DotGeneral(q, []int{3}, []int{0, 2}, k, []int{3}, []int{0, 2})
	}
	s = Add(MulScalar(s, 1/math.Sqrt(float64(n.d))), BroadcastToDims(InsertAxes(constLike(s, bias), 0), s.Shape().Dimensions...))
	if n.v.KerpleLog { // after the scale, as ALiBi's (position_kerple.go)
		kb := n.kerpleBias(l, p, kerpleDistances(s.Graph(), T))
		s = Add(s, BroadcastToDims(InsertAxes(kb, 0), s.Shape().Dimensions...))
	}
	alpha := softmax(s)
	o := DotGeneral(alpha, []int{3}, []int{0, 1}, v, []int{1}, []int{0, 2}) // [B, H, Tq, d]
	return n.output(l, p, TransposeAllAxes(o, 0, 2, 1, 3), rot)             // [B, Tq, H, d]
}

// lastAxis applies op(x, w) with w [N] broadcast along x's leading axes.
func lastAxis(op func(a, b *Node) *Node, x, w *Node) *Node {
	dims := make([]int, x.Rank())
	for i := range dims {
		dims[i] = 1
	}
	dims[x.Rank()-1] = w.Shape().Dimensions[0]
	return op(x, BroadcastToDims(Reshape(w, dims...), x.Shape().Dimensions...))
}

// mm is x[..., K] times w[K, N].
func mm(x, w *Node) *Node { return DotGeneral(x, []int{x.Rank() - 1}, nil, w, []int{0}, nil) }

// rotate turns each interleaved pair (u0, u1) of u [B, T, H, d] by psi:
// (u0 cos - u1 sin, u0 sin + u1 cos) = u*cos + swap(u)*sin, where swap(u)
// = (-u1, u0) is a product with a fixed +-1 matrix (slicing has no gradient).
func rotate(u, cos, sin *Node) *Node {
	d := u.Shape().Dimensions[u.Rank()-1]
	return Add(Mul(u, cos), Mul(mm(u, constLike(u, swapMatrix(u.Graph(), d))), sin))
}

// swapMatrix S [d, d] with (u S)[2p] = -u[2p+1], (u S)[2p+1] = u[2p].
func swapMatrix(g *Graph, d int) *Node {
	s := make([]float32, d*d)
	for p := 0; p < d/2; p++ {
		s[(2*p+1)*d+2*p] = -1
		s[(2*p)*d+2*p+1] = 1
	}
	return Const(g, tensors.FromFlatDataAndDimensions(s, d, d))
}

// constLike converts a float32 constant to x's dtype (float64 in gradient tests).
func constLike(x, c *Node) *Node {
	if c.DType() == x.DType() {
		return c
	}
	return ConvertDType(c, x.DType())
}

// learnedRotation computes cos/sin of psi in-graph for a trained angle
// table [V, H, P]: the prefix sum over the block is a float32 product with a
// lower-triangular ones matrix. float32 is fine at training lengths: a sum
// of at most T terms rounds by a few ulps of |psi| per term, far below the
// angles' scale; long windows are the evaluator's, which sums in float64.
func (n net) learnedRotation(angles, tokens *Node) *rotation {
	g := tokens.Graph()
	B, T := tokens.Shape().Dimensions[0], tokens.Shape().Dimensions[1]
	a := Reshape(Gather(angles, InsertAxes(tokens, -1)), B, T, n.H*n.P)
	tri := make([]float32, T*T)
	for i := 0; i < T; i++ {
		for j := 0; j <= i; j++ {
			tri[i*T+j] = 1
		}
	}
	L := constLike(angles, Const(g, tensors.FromFlatDataAndDimensions(tri, T, T)))
	psi := DotGeneral(a, []int{1}, nil, L, []int{1}, nil) // [B, HP, T]: psi[t] = sum_{s<=t} a[s]
	psi = Reshape(TransposeAllAxes(psi, 0, 2, 1), B, T, n.H, n.P, 1)
	dup := func(x *Node) *Node { return Reshape(BroadcastToDims(x, B, T, n.H, n.P, 2), B, T, n.H, n.d) }
	return &rotation{cos: dup(Cos(psi)), sin: dup(Sin(psi))}
}

// projectedRotation computes cos/sin of psi^l in-graph for learned-proj-qkv
// (modelspec/angleproj.go): theta_t = a_t W_ang for the normed block input
// a [B, T, D] and W_ang [D, H*P], and psi_t = sum_{s<=t} theta_s, the prefix
// sum as a float32 product with a lower-triangular ones matrix (CumSum has
// no gradient in simplego v0.26.0; float32 is exact enough at training
// lengths, as for learnedRotation).
func (n net) projectedRotation(w, a *Node) *rotation {
	B, T := a.Shape().Dimensions[0], a.Shape().Dimensions[1]
	theta := mm(a, w)                                                               // [B, T, HP]
	psi := DotGeneral(theta, []int{1}, nil, triMask(theta, T, true), []int{1}, nil) // [B, HP, T]
	psi = Reshape(TransposeAllAxes(psi, 0, 2, 1), B, T, n.H, n.P, 1)
	dup := func(x *Node) *Node { return Reshape(BroadcastToDims(x, B, T, n.H, n.P, 2), B, T, n.H, n.d) }
	return &rotation{cos: dup(Cos(psi)), sin: dup(Sin(psi))}
}

// rmsNorm is u / sqrt(mean(u^2) + eps) over the last axis (Div by Sqrt:
// Rsqrt has no gradient in v0.26.0).
func rmsNorm(u *Node) *Node {
	ms := ReduceMean(Square(u), -1)
	return Div(u, InsertAxes(Sqrt(AddScalar(ms, modelspec.NormEps)), -1))
}

// gelu is the tanh form: 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))).
func gelu(u *Node) *Node {
	inner := MulScalar(Add(u, MulScalar(Mul(Square(u), u), 0.044715)), math.Sqrt(2/math.Pi))
	return Mul(MulScalar(u, 0.5), AddScalar(Tanh(inner), 1))
}

// softmax over the last axis; the max shift carries no gradient.
func softmax(s *Node) *Node {
	mx := StopGradient(ReduceMax(s, -1))
	e := Exp(Sub(s, InsertAxes(mx, -1)))
	return Div(e, InsertAxes(ReduceSum(e, -1), -1))
}

// meanNLL is the mean over [B, T] of -log softmax(logits)[target].
func meanNLL(logits, targets *Node) *Node {
	V := logits.Shape().Dimensions[2]
	mx := StopGradient(ReduceMax(logits, -1))
	sh := Sub(logits, InsertAxes(mx, -1))
	lse := Log(ReduceSum(Exp(sh), -1))
	tgt := ReduceSum(Mul(sh, OneHot(targets, V, logits.DType())), -1)
	return ReduceAllMean(Sub(lse, tgt))
}

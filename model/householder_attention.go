package model

import (
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/modelspec"
)

// PaTH attention in the graph (the math and the choices: modelspec/householder.go).
//
// The transported logits q_i^T H_i ... H_{j+1} k_j of a whole window are
// formed at once with the UT transform (the official kernels' within-chunk
// form, here with the window as one chunk): with N = diag(beta)
// strict_tril(W W^T) and R = diag(beta) strict_tril(W K^T),
//
//	S = tril(Q K^T) - tril(Q W^T) (I + N)^-1 R,
//
// because row t of C = (I + N)^-1 R holds the coefficients c_t[j] with
// H_t ... H_{j+1} k_j = k_j - sum_{j<s<=t} c_s[j] w_s, and they obey
// c_t = beta_t [t > j] (w_t . k_j - sum_{s<t} (w_t . w_s) c_s), a unit lower
// triangular solve. simplego has no triangular solve, so the inverse is the
// blocked recursive one (log2 T levels of batched products of the blocks,
// numerically the standard triangular inversion; a Neumann series would
// overflow when the w_t align). Every op has a gradient in v0.26.0: no
// Slice or Concatenate (blocks are selected and placed with one-hot
// constants), no CumSum (the gate's prefix sum is a triangular product).
// Cost O(T^3) per head: fine at training lengths (T <= 512), which is
// all this graph is for; the native evaluator streams in O(L d).

// pathBroken names a piece that householder_test.go breaks on purpose
// ("gate", "conv") to prove that the reference tests can fail; empty in
// every real run.
var pathBroken string

// pathLogits returns block l's unscaled logits [B, H, T, T] for q, k
// [B, T, H, d] and the normed block input a [B, T, D]: the transported
// q.k plus, for path-fox, G_i - G_j. Entries above the diagonal are finite
// and meaningless (the causal bias masks them).
func (n net) pathLogits(l int, p map[string]*Node, a, q, k *Node) *Node {
	w, beta := n.pathSteps(l, p, a)
	s := transportedScores(q, k, w, beta)
	if n.v.ForgetGate && pathBroken != "gate" {
		g := logSigmoid(lastAxis(Add, mm(a, p[blockName(l, modelspec.FoxWGate)]), p[blockName(l, modelspec.FoxBGate)])) // [B, T, H]
		G := prefixSum(g)                                                                                               // [B, H, T]
		T := G.Shape().Dimensions[2]
		s = Add(s, Sub(expandAxis(G, 3, T), expandAxis(G, 2, T)))
	}
	return s
}

// pathSteps returns the unit directions w [B, T, H, d] and strengths beta
// [B, T, H] of the Householder steps of block l.
func (n net) pathSteps(l int, p map[string]*Node, a *Node) (w, beta *Node) {
	B, T := a.Shape().Dimensions[0], a.Shape().Dimensions[1]
	z := mm(mm(a, p[blockName(l, modelspec.PathDown)]), p[blockName(l, modelspec.PathUp)])
	y := z
	if pathBroken != "conv" {
		y = causalConv(z, p[blockName(l, modelspec.PathConvW)])
	}
	y = Reshape(Mul(y, Logistic(y)), B, T, n.H, n.d) // SiLU, then per head
	w = Div(y, InsertAxes(Sqrt(AddScalar(ReduceSum(Square(y), -1), modelspec.PathNormEps)), -1))
	beta = MulScalar(Logistic(lastAxis(Add, mm(a, p[blockName(l, modelspec.PathWBeta)]), p[blockName(l, modelspec.PathBBeta)])), 2)
	return w, beta
}

// causalConv is the depthwise causal convolution y_t = sum_k conv[k] * z_{t-k}
// of z [B, T, C] with conv [K, C] (z before the window counts as 0): the
// shifts are products with fixed [K, T, T] shift matrices.
func causalConv(z, conv *Node) *Node {
	B, T, C := z.Shape().Dimensions[0], z.Shape().Dimensions[1], z.Shape().Dimensions[2]
	K := conv.Shape().Dimensions[0]
	sh := make([]float32, K*T*T)
	for k := 0; k < K; k++ {
		for t := k; t < T; t++ {
			sh[(k*T+t)*T+t-k] = 1
		}
	}
	S := constLike(z, Const(z.Graph(), tensors.FromFlatDataAndDimensions(sh, K, T, T)))
	zs := DotGeneral(S, []int{2}, nil, z, []int{1}, nil) // [K, T, B, C]: zs[k, t] = z_{t-k}
	taps := BroadcastToDims(Reshape(conv, K, 1, 1, C), K, T, B, C)
	return TransposeAllAxes(ReduceSum(Mul(zs, taps), 0), 1, 0, 2)
}

// transportedScores is S = tril(Q K^T) - tril(Q W^T) (I + N)^-1 R (see the
// file comment) for q, k, w [B, T, H, d] and beta [B, T, H]: [B, H, T, T].
func transportedScores(q, k, w, beta *Node) *Node {
	T := q.Shape().Dimensions[1]
	dot := func(x, y *Node) *Node { return DotGeneral(x, []int{3}, []int{0, 2}, y, []int{3}, []int{0, 2}) } // [B, H, T, T]
	B, H := q.Shape().Dimensions[0], q.Shape().Dimensions[2]
	full := func(m *Node) *Node { return BroadcastToDims(Reshape(m, 1, 1, T, T), B, H, T, T) }
	lower, strict := full(triMask(q, T, true)), full(triMask(q, T, false))
	bt := expandAxis(TransposeAllAxes(beta, 0, 2, 1), 3, T) // beta_t on row t
	N := Mul(bt, Mul(dot(w, w), strict))
	R := Mul(bt, Mul(dot(w, k), strict))
	C := bmm(unitLowerInverse(N), R)
	return Sub(dot(q, k), bmm(Mul(dot(q, w), lower), C))
}

// bmm is x [B, H, M, K] times y [B, H, K, N].
func bmm(x, y *Node) *Node { return DotGeneral(x, []int{3}, []int{0, 1}, y, []int{2}, []int{0, 1}) }

// expandAxis inserts an axis of size n at position axis by broadcasting.
func expandAxis(x *Node, axis, n int) *Node {
	e := InsertAxes(x, axis)
	dims := append([]int(nil), e.Shape().Dimensions...)
	dims[axis] = n
	return BroadcastToDims(e, dims...)
}

// triMask is the [T, T] lower-triangular 0/1 matrix (diagonal included or
// not) in x's dtype.
func triMask(x *Node, T int, diag bool) *Node {
	m := make([]float32, T*T)
	for i := 0; i < T; i++ {
		for j := 0; j < i || (diag && j == i); j++ {
			m[i*T+j] = 1
		}
	}
	return constLike(x, Const(x.Graph(), tensors.FromFlatDataAndDimensions(m, T, T)))
}

// unitLowerInverse returns (I + N)^-1 for N [B, H, T, T] strictly lower
// triangular, by blocks: with the inverses A', D' of the two diagonal
// blocks of a 2x2 block lower-triangular matrix [[A, 0], [C, D]], its
// inverse is [[A', 0], [-D' C A', D']]; blocks of size 1 are 1, and each
// level doubles the block size. T is padded with identity rows to a power
// of two (embedding products, as Pad has no gradient).
func unitLowerInverse(N *Node) *Node {
	g := N.Graph()
	B, H, T := N.Shape().Dimensions[0], N.Shape().Dimensions[1], N.Shape().Dimensions[2]
	Tp := 1
	for Tp < T {
		Tp *= 2
	}
	var E *Node // [Tp, T]: E[a, b] = [a == b]
	if Tp != T {
		e := make([]float32, Tp*T)
		for i := 0; i < T; i++ {
			e[i*T+i] = 1
		}
		E = constLike(N, Const(g, tensors.FromFlatDataAndDimensions(e, Tp, T)))
		N = DotGeneral(N, []int{3}, nil, E, []int{1}, nil)                               // [B, H, T, Tp]
		N = TransposeAllAxes(DotGeneral(E, []int{1}, nil, N, []int{2}, nil), 1, 2, 0, 3) // [B, H, Tp, Tp]
	}
	cst := func(v []float32, dims ...int) *Node {
		return constLike(N, Const(g, tensors.FromFlatDataAndDimensions(v, dims...)))
	}
	Y := BroadcastToDims(cst([]float32{1}, 1, 1, 1, 1, 1), B, H, Tp, 1, 1) // inverses of the 1x1 blocks
	for s := 1; s < Tp; s *= 2 {
		nb := Tp / (2 * s)
		// C blocks: rows of block 2b+1, columns of block 2b.
		sel := make([]float32, nb*2*nb*2)
		for b := 0; b < nb; b++ {
			sel[((b*2+1)*nb+b)*2+0] = 1
		}
		mask := BroadcastToDims(cst(sel, 1, 1, nb, 2, 1, nb, 2, 1), B, H, nb, 2, s, nb, 2, s)
		C := ReduceSum(Mul(Reshape(N, B, H, nb, 2, s, nb, 2, s), mask), 3, 5, 6) // [B, H, nb, s, s]
		Yr := Reshape(Y, B, H, nb, 2, s, s)
		A := DotGeneral(Yr, []int{3}, nil, cst([]float32{1, 0}, 2), []int{0}, nil)
		D := DotGeneral(Yr, []int{3}, nil, cst([]float32{0, 1}, 2), []int{0}, nil)
		blk := func(x, y *Node) *Node { return DotGeneral(x, []int{4}, []int{0, 1, 2}, y, []int{3}, []int{0, 1, 2}) }
		Cn := Neg(blk(blk(D, C), A))
		place := func(x *Node, r, c int) *Node {
			m := make([]float32, 4)
			m[r*2+c] = 1
			return Mul(BroadcastToDims(Reshape(x, B, H, nb, 1, s, 1, s), B, H, nb, 2, s, 2, s),
				BroadcastToDims(cst(m, 1, 1, 1, 2, 1, 2, 1), B, H, nb, 2, s, 2, s))
		}
		Y = Reshape(Add(Add(place(A, 0, 0), place(D, 1, 1)), place(Cn, 1, 0)), B, H, nb, 2*s, 2*s)
	}
	Y = Reshape(Y, B, H, Tp, Tp)
	if E != nil {
		Y = DotGeneral(Y, []int{3}, nil, E, []int{0}, nil)                               // [B, H, Tp, T]
		Y = TransposeAllAxes(DotGeneral(E, []int{0}, nil, Y, []int{2}, nil), 1, 2, 0, 3) // [B, H, T, T]
	}
	return Y
}

// prefixSum is G[b, h, t] = sum_{s<=t} g[b, s, h] for g [B, T, H], as a
// product with a lower-triangular ones matrix (float32 is exact enough at
// training lengths: |G| <= T max|g|).
func prefixSum(g *Node) *Node {
	T := g.Shape().Dimensions[1]
	return DotGeneral(g, []int{1}, nil, triMask(g, T, true), []int{1}, nil) // [B, H, T]
}

// logSigmoid is log sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), stable at
// both ends.
func logSigmoid(x *Node) *Node {
	return Sub(Min(x, ZerosLike(x)), Log1p(Exp(Neg(Abs(x)))))
}

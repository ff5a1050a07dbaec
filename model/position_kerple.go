package model

import (
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/modelspec"
)

// KERPLE's log bias (modelspec/kerple.go): logits get -p' log(1 + a' (i-j))
// with p' = max(kerple_p[h], eps), a' = max(kerple_a[h], eps) of the block.
// Unlike ALiBi's it depends on trained tensors, so it is built in the graph
// per block (the host bias stays the causal mask) and its gradient reaches
// kerple_p and kerple_a through the graph's own VJPs.

// kerpleBias is block l's KERPLE bias [H, Tq, Tk] for the distances dist
// [Tq, Tk] (a float32 constant, i - j, 0 where j > i: those pairs are
// masked by the host bias, and log1p(0) = 0 keeps them finite).
func (n net) kerpleBias(l int, p map[string]*Node, dist *Node) *Node {
	pe := kerpleFloor(p[blockName(l, modelspec.KerpleP)])
	ae := kerpleFloor(p[blockName(l, modelspec.KerpleA)])
	dims := append([]int{n.H}, dist.Shape().Dimensions...)
	perHead := func(x *Node) *Node { return BroadcastToDims(Reshape(x, n.H, 1, 1), dims...) }
	dd := BroadcastToDims(InsertAxes(constLike(pe, dist), 0), dims...)
	return Neg(Mul(perHead(pe), Log1p(Mul(perHead(ae), dd))))
}

// kerpleFloor is max(x, KerpleEps) with the derivative modelspec's
// KerpleBiasGrad takes: 1 above the floor, 0 at and below it. (Max's VJP
// would give 1 at x == eps too.)
func kerpleFloor(x *Node) *Node {
	eps := BroadcastToDims(Scalar(x.Graph(), x.DType(), modelspec.KerpleEps), x.Shape().Dimensions...)
	return Where(GreaterThan(x, eps), x, eps)
}

// kerpleDistances is the constant [T, T] of max(i - j, 0): the causal
// distances of a window that the bias reads.
func kerpleDistances(g *Graph, T int) *Node {
	d := make([]float32, T*T)
	for i := 0; i < T; i++ {
		for j := 0; j <= i; j++ {
			d[i*T+j] = float32(i - j)
		}
	}
	return Const(g, tensors.FromFlatDataAndDimensions(d, T, T))
}

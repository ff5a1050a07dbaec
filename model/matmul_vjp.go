package model

import (
	"fmt"
	"reflect"
	"sort"
	"sync"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// gomlx v0.26.0's stock DotGeneral VJP multiplies the output gradient by the
// other operand broadcast to the full outer shape and then reduces: for the
// attention product that is a [B, H, T, T, d] temporary, and for a d=128
// model 8-14 s and 3.5 GB per step. matmulVJP states the same gradients as
// two DotGenerals plus a transpose (what upstream did after v0.26.0):
//
//	out  = [batch..., lhsFree..., rhsFree...]
//	dlhs = DotGeneral(v, contract rhsFree, batch; rhs, contract rhsFree, batch)
//	     -> [batch..., lhsFree..., rhsContracting(sorted)...], transposed to lhs's axis order
//	drhs = DotGeneral(v, contract lhsFree, batch; lhs, contract lhsFree, batch)
//	     -> [batch..., rhsFree..., lhsContracting(sorted)...], transposed to rhs's axis order
//
// It is installed through graph.VJPRegistration, the documented hook, once
// per process; tests compare it with the stock VJP and finite differences.

var (
	stockDotGeneralVJP VJP
	installVJPOnce     sync.Once
)

func installMatmulVJP() {
	installVJPOnce.Do(func() {
		stockDotGeneralVJP = VJPRegistration[NodeTypeDotGeneral]
		VJPRegistration[NodeTypeDotGeneral] = matmulVJP
	})
}

// dotAxes reads the axes of a DotGeneral node. gomlx keeps them in an
// unexported struct (nodeInputsDotGeneral in v0.26.0); reflection reads them
// without unsafe. A layout change is caught by TestDotAxesReadable.
func dotAxes(node *Node) (lc, lb, rc, rb []int, err error) {
	in := reflect.ValueOf(node).Elem().FieldByName("inputs")
	if !in.IsValid() || in.IsNil() {
		return nil, nil, nil, nil, fmt.Errorf("model: gomlx Node has no inputs field (gomlx version changed?)")
	}
	s := in.Elem()
	if s.Kind() == reflect.Pointer {
		s = s.Elem()
	}
	get := func(name string) []int {
		f := s.FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Slice {
			err = fmt.Errorf("model: gomlx DotGeneral inputs lack field %s (gomlx version changed?)", name)
			return nil
		}
		out := make([]int, f.Len())
		for i := range out {
			out[i] = int(f.Index(i).Int())
		}
		return out
	}
	lc, lb, rc, rb = get("lhsContractingAxes"), get("lhsBatchAxes"), get("rhsContractingAxes"), get("rhsBatchAxes")
	return
}

func freeAxes(rank int, contracting, batch []int) []int {
	used := make([]bool, rank)
	for _, a := range contracting {
		used[a] = true
	}
	for _, a := range batch {
		used[a] = true
	}
	var free []int
	for a := 0; a < rank; a++ {
		if !used[a] {
			free = append(free, a)
		}
	}
	return free
}

func iotaFrom(start, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = start + i
	}
	return s
}

// operandGrad computes the gradient of one operand ("this") of a DotGeneral,
// given the output gradient v and the other operand. vThisFree/vOtherFree
// are the positions in v of this and the other operand's free axes.
func operandGrad(v *Node, thisRank int, thisC, thisB, thisFree []int,
	other *Node, otherC, otherB, otherFree []int, vOtherFree []int) *Node {
	nb := len(thisB)
	g := DotGeneral(v, vOtherFree, iotaFrom(0, nb), other, otherFree, otherB)
	// g axes: [batch (in thisB order)..., thisFree..., otherC sorted ascending...]
	order := append([]int(nil), otherC...)
	sort.Ints(order)
	rankInSorted := func(a int) int { return sort.SearchInts(order, a) }
	perm := make([]int, thisRank)
	for i, a := range thisB {
		perm[a] = i
	}
	for i, a := range thisFree {
		perm[a] = nb + i
	}
	for i, a := range thisC {
		perm[a] = nb + len(thisFree) + rankInSorted(otherC[i])
	}
	identity := true
	for i, p := range perm {
		if i != p {
			identity = false
		}
	}
	if identity {
		return g
	}
	return TransposeAllAxes(g, perm...)
}

func matmulVJP(node *Node, vjpOutputs []*Node, outShape shapes.Shape) []*Node {
	lc, lb, rc, rb, err := dotAxes(node)
	if err != nil {
		return stockDotGeneralVJP(node, vjpOutputs, outShape)
	}
	v := vjpOutputs[0]
	lhs, rhs := node.Inputs()[0], node.Inputs()[1]
	lf := freeAxes(lhs.Rank(), lc, lb)
	rf := freeAxes(rhs.Rank(), rc, rb)
	nb := len(lb)
	vL := iotaFrom(nb, len(lf))
	vR := iotaFrom(nb+len(lf), len(rf))
	dl := operandGrad(v, lhs.Rank(), lc, lb, lf, rhs, rc, rb, rf, vR)
	dr := operandGrad(v, rhs.Rank(), rc, rb, rf, lhs, lc, lb, lf, vL)
	return []*Node{dl, dr}
}

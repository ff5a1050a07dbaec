package model

import (
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// largestNode builds (without running) the training-step graph of c and
// returns the size in elements of its largest node.
func largestNode(t *testing.T, c Config) (int, string) {
	t.Helper()
	var best int
	var what string
	err := catch("building step graph", func() error {
		tr := &trainer{c: c, n: newNet(c), specs: paramSpecs(c)}
		tr.hostRot = tr.n.v.HostRotation()
		g := NewGraph(testBackend(t), "step")
		defer g.Finalize()
		var in []*Node
		param := func(dt dtypes.DType, dims ...int) {
			in = append(in, Parameter(g, "", shapes.Make(dt, dims...)))
		}
		for range 3 {
			for _, s := range tr.specs {
				param(dtypes.Float32, s.Shape...)
			}
		}
		param(dtypes.Int32, c.Batch, c.Context)
		param(dtypes.Int32, c.Batch, c.Context)
		if tr.hostRot {
			param(dtypes.Float32, c.Batch, c.Context, c.Heads, c.DModel/c.Heads)
			param(dtypes.Float32, c.Batch, c.Context, c.Heads, c.DModel/c.Heads)
		}
		for range 3 {
			param(dtypes.Float32)
		}
		tr.stepGraph(in)
		for _, n := range g.Nodes() {
			if s := n.Shape(); s.Size() > best {
				best, what = s.Size(), n.String()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return best, what
}

// TestNoQuadraticTimesWidthTemporaries checks the training graph at the cpu
// profile has no tensor as large as batch x T x T x d_head (what the stock
// DotGeneral gradient of attention builds), and that the check would catch it.
func TestNoQuadraticTimesWidthTemporaries(t *testing.T) {
	installMatmulVJP()
	for _, v := range []string{"rope", "learned-qkv"} {
		c, _ := shapeConfig("cpu", v, 257)
		limit := c.Batch * c.Context * c.Context * (c.DModel / c.Heads)
		got, what := largestNode(t, c)
		if got >= limit {
			t.Fatalf("%s: largest node has %d elements >= B*T*T*d = %d: %s", v, got, limit, what)
		}
		t.Logf("%s: largest node %d elements (%.1f MB), limit %d", v, got, float64(4*got)/(1<<20), limit)
	}
	if testing.Short() {
		return
	}
	VJPRegistration[NodeTypeDotGeneral] = stockDotGeneralVJP
	defer func() { VJPRegistration[NodeTypeDotGeneral] = matmulVJP }()
	c, _ := shapeConfig("cpu", "rope", 257)
	if got, _ := largestNode(t, c); got < c.Batch*c.Context*c.Context*(c.DModel/c.Heads) {
		t.Fatalf("with the stock VJP the largest node is only %d elements: the check is blind", got)
	}
}

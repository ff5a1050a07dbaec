package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/modelspec"
)

func testBackend(t testing.TB) backends.Backend {
	t.Helper()
	b, err := NewBackend("go")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func randTensor(rng *rand.Rand, dims ...int) *tensors.Tensor {
	x := make([]float64, size(dims))
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return tensors.FromFlatDataAndDimensions(x, dims...)
}

// gradients runs fn and its gradient with respect to every input (float64).
func gradients(t *testing.T, fn func(in []*Node) *Node, inputs []*tensors.Tensor) (float64, [][]float64) {
	t.Helper()
	var loss float64
	var grads [][]float64
	err := catch("gradient test", func() error {
		exec, err := NewExec(testBackend(t), func(in []*Node) []*Node {
			l := fn(in)
			var wrt []*Node
			for _, x := range in {
				if x.DType().IsFloat() {
					wrt = append(wrt, x)
				}
			}
			return append([]*Node{l}, Gradient(l, wrt...)...)
		})
		if err != nil {
			return err
		}
		defer exec.Finalize()
		out, err := exec.Exec(tensorArgs(inputs)...)
		if err != nil {
			return err
		}
		loss = tensors.ToScalar[float64](out[0])
		next := out[1:]
		for _, x := range inputs {
			if !x.DType().IsFloat() {
				grads = append(grads, nil)
				continue
			}
			grads = append(grads, tensors.MustCopyFlatData[float64](next[0]))
			next = next[1:]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return loss, grads
}

func tensorArgs(ts []*tensors.Tensor) []any {
	a := make([]any, len(ts))
	for i, x := range ts {
		a[i] = x
	}
	return a
}

// checkFiniteDifferences compares the graph gradient of fn with central
// differences at up to k random elements of every float64 input.
func checkFiniteDifferences(t *testing.T, fn func(in []*Node) *Node, inputs []*tensors.Tensor, k int, tol float64) {
	t.Helper()
	_, grads := gradients(t, fn, inputs)
	exec, err := NewExec(testBackend(t), fn)
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	eval := func(in []*tensors.Tensor) float64 {
		out, err := exec.Exec(tensorArgs(in)...)
		if err != nil {
			t.Fatal(err)
		}
		return tensors.ToScalar[float64](out[0])
	}
	rng := rand.New(rand.NewPCG(11, 12))
	const h = 1e-6
	for i, x := range inputs {
		if x.DType().IsInt() {
			continue
		}
		base := tensors.MustCopyFlatData[float64](x)
		for n := 0; n < k && n < len(base); n++ {
			j := rng.IntN(len(base))
			probe := func(delta float64) float64 {
				v := append([]float64(nil), base...)
				v[j] += delta
				in := append([]*tensors.Tensor(nil), inputs...)
				in[i] = tensors.FromFlatDataAndDimensions(v, x.Shape().Dimensions...)
				return eval(in)
			}
			fd := (probe(h) - probe(-h)) / (2 * h)
			if g := grads[i][j]; math.Abs(g-fd) > tol*math.Max(1, math.Abs(fd)) {
				t.Errorf("input %d element %d: gradient %.9g, finite difference %.9g", i, j, g, fd)
			}
		}
	}
}

type dotCase struct {
	name           string
	lhs, rhs       []int
	lc, lb, rc, rb []int
}

var dotCases = []dotCase{
	{"dense [B,T,K]x[K,N]", []int{2, 3, 4}, []int{4, 5}, []int{2}, nil, []int{0}, nil},
	{"scores [B,T,H,d].[B,T,H,d]", []int{2, 3, 2, 4}, []int{2, 3, 2, 4}, []int{3}, []int{0, 2}, []int{3}, []int{0, 2}},
	{"alpha.v [B,H,T,T].[B,T,H,d]", []int{2, 2, 3, 3}, []int{2, 3, 2, 4}, []int{3}, []int{0, 1}, []int{1}, []int{0, 2}},
	{"two unsorted contractions", []int{3, 4, 5}, []int{5, 2, 4}, []int{2, 1}, nil, []int{0, 2}, nil},
	{"batch in the middle", []int{4, 3, 2}, []int{2, 3, 5}, []int{2}, []int{1}, []int{0}, []int{1}},
	{"prefix sum [B,T,K].[T,T]", []int{2, 5, 3}, []int{5, 5}, []int{1}, nil, []int{1}, nil},
}

func (dc dotCase) fn(in []*Node) *Node {
	out := DotGeneral(in[0], dc.lc, dc.lb, in[1], dc.rc, dc.rb)
	// A fixed random weighting, so every output element has its own gradient.
	w := Sin(MulScalar(AddScalar(ConvertDType(IotaFull(out.Graph(), out.Shape()), out.DType()), 1), 0.7))
	return ReduceAllSum(Mul(out, w))
}

func TestMatmulVJPMatchesStockAndFiniteDifferences(t *testing.T) {
	installMatmulVJP()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dc := range dotCases {
		t.Run(dc.name, func(t *testing.T) {
			in := []*tensors.Tensor{randTensor(rng, dc.lhs...), randTensor(rng, dc.rhs...)}
			_, ours := gradients(t, dc.fn, in)
			VJPRegistration[NodeTypeDotGeneral] = stockDotGeneralVJP
			_, stock := gradients(t, dc.fn, in)
			VJPRegistration[NodeTypeDotGeneral] = matmulVJP
			for i := range ours {
				for j := range ours[i] {
					if math.Abs(ours[i][j]-stock[i][j]) > 1e-12*math.Max(1, math.Abs(stock[i][j])) {
						t.Fatalf("operand %d element %d: ours %g, stock %g", i, j, ours[i][j], stock[i][j])
					}
				}
			}
			checkFiniteDifferences(t, dc.fn, in, 12, 1e-6)
		})
	}
}

func TestDotAxesReadable(t *testing.T) {
	g := NewGraph(testBackend(t), "axes")
	defer g.Finalize()
	a := Parameter(g, "a", tensors.FromFlatDataAndDimensions(make([]float32, 24), 2, 3, 4).Shape())
	b := Parameter(g, "b", tensors.FromFlatDataAndDimensions(make([]float32, 24), 2, 4, 3).Shape())
	n := DotGeneral(a, []int{2}, []int{0}, b, []int{1}, []int{0})
	lc, lb, rc, rb, err := dotAxes(n)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(lc, lb, rc, rb) != "[2] [0] [1] [0]" {
		t.Fatalf("axes %v %v %v %v, want [2] [0] [1] [0]", lc, lb, rc, rb)
	}
}

// TestCustomOpGradients checks, in float64, every piece of the model whose
// gradient is assembled here: rotation, the learned prefix-sum rotation,
// learned-proj-qkv's projected prefix-sum rotation, RMSNorm, GELU,
// softmax, cross-entropy.
func TestCustomOpGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	c := Config{Variant: "learned-qkv", DModel: 8, Heads: 2, Vocab: 5}
	n := newNet(c)
	B, T := 2, 4
	tokens := tensors.FromFlatDataAndDimensions([]int32{0, 3, 1, 4, 2, 2, 0, 1}, B, T)
	weight := func(x *Node) *Node { // fixed non-uniform weighting of an output
		return ReduceAllSum(Mul(x, Cos(ConvertDType(IotaFull(x.Graph(), x.Shape()), x.DType()))))
	}
	cases := []struct {
		name   string
		fn     func(in []*Node) *Node
		inputs []*tensors.Tensor
	}{
		{"rotate", func(in []*Node) *Node { return weight(rotate(in[0], Cos(in[1]), Sin(in[1]))) },
			[]*tensors.Tensor{randTensor(rng, B, T, 2, 4), randTensor(rng, B, T, 2, 4)}},
		{"learnedRotation", func(in []*Node) *Node {
			r := n.learnedRotation(in[0], in[1])
			return Add(weight(r.cos), weight(Mul(r.sin, r.sin)))
		}, []*tensors.Tensor{randTensor(rng, 5, 2, 2), tokens}},
		{"projectedRotation", func(in []*Node) *Node {
			r := n.projectedRotation(in[0], in[1])
			return Add(weight(r.cos), weight(Mul(r.sin, r.sin)))
		}, []*tensors.Tensor{randTensor(rng, 8, 4), randTensor(rng, B, T, 8)}},
		{"rmsNorm", func(in []*Node) *Node { return weight(rmsNorm(in[0])) }, []*tensors.Tensor{randTensor(rng, 3, 6)}},
		{"gelu", func(in []*Node) *Node { return weight(gelu(in[0])) }, []*tensors.Tensor{randTensor(rng, 3, 6)}},
		{"softmax", func(in []*Node) *Node { return weight(softmax(in[0])) }, []*tensors.Tensor{randTensor(rng, 3, 6)}},
		{"meanNLL", func(in []*Node) *Node { return meanNLL(in[0], in[1]) },
			[]*tensors.Tensor{randTensor(rng, B, T, 5), tokens}},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) { checkFiniteDifferences(t, cs.fn, cs.inputs, 10, 1e-6) })
	}
}

// TestModelGradients checks the whole model's loss gradient in float64 for
// every variant at a few elements of every parameter; the learned tables
// also at random angles (randomAngleSet: at zero angles every rotation is
// the identity, and a wrong one goes unseen).
func TestModelGradients(t *testing.T) {
	variants := modelspec.Variants()
	random := []string{"learned-qk", "learned-qkv"}
	if testing.Short() {
		variants, random = []string{"alibi", "kerple-log", "learned-qkv", "path-fox"}, []string{"learned-qkv"}
	}
	for _, v := range random {
		variants = append(variants, v+"/random-angles")
	}
	for _, name := range variants {
		v, angles := strings.CutSuffix(name, "/random-angles")
		t.Run(name, func(t *testing.T) {
			set, c := randomSetWith(t, v, angles)
			c.Layers = 1
			specs := paramSpecs(c)
			vals := make([][]float32, len(specs))
			for i, sp := range specs {
				x, err := set.Get(sp.Name)
				if err != nil {
					t.Fatal(err)
				}
				vals[i] = x
			}
			B, T := 2, 6
			tok, tgt, _ := newSynthData(c.Vocab).TrainBatch(1, 0, B, T)
			fn, inputs := float64Loss(t, c, specs, vals, tok, tgt, B, T)
			checkFiniteDifferences(t, fn, inputs, 3, 1e-5)
		})
	}
}

// float64Loss is the training loss of config c as a float64 graph function
// of its inputs: the parameters (vals, in specs order) then the batch (tokens,
// targets and, for host rotations, cos and sin), with those inputs.
func float64Loss(t *testing.T, c Config, specs []paramSpec, vals [][]float32, tok, tgt []int32, B, T int) (func(in []*Node) *Node, []*tensors.Tensor) {
	t.Helper()
	tr := &trainer{c: c, n: newNet(c), specs: specs, table: fixedAngles(c)}
	tr.hostRot = tr.n.v.HostRotation()
	bin, err := tr.batchInputs(tok, tgt, B, T)
	if err != nil {
		t.Fatal(err)
	}
	var inputs []*tensors.Tensor
	for i, s := range specs {
		f := make([]float64, len(vals[i]))
		for j, y := range vals[i] {
			f[j] = float64(y)
		}
		inputs = append(inputs, tensors.FromFlatDataAndDimensions(f, s.Shape...))
	}
	k := len(inputs)
	for i, b := range bin {
		bt := b.(*tensors.Tensor)
		if i >= 2 { // cos, sin to float64
			f := tensors.MustCopyFlatData[float32](bt)
			g := make([]float64, len(f))
			for j, y := range f {
				g[j] = float64(y)
			}
			bt = tensors.FromFlatDataAndDimensions(g, bt.Shape().Dimensions...)
		}
		inputs = append(inputs, bt)
	}
	return func(in []*Node) *Node {
		tk, tg, rot, _ := tr.batchNodes(in[k:])
		return tr.loss(in[:k], tk, tg, rot)
	}, inputs
}

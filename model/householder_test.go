package model

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/modelspec"
	"routebench/modelspec/weights"
)

// TestPathPieceGradients checks each piece of the PaTH graph against
// central differences in float64, at window lengths that are and are not
// powers of two (the padded inverse).
func TestPathPieceGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	weight := func(x *Node) *Node {
		return ReduceAllSum(Mul(x, Cos(ConvertDType(IotaFull(x.Graph(), x.Shape()), x.DType()))))
	}
	for _, T := range []int{5, 8} {
		B, H, d := 2, 2, 3
		cases := []struct {
			name   string
			fn     func(in []*Node) *Node
			inputs []*tensors.Tensor
		}{
			{"unitLowerInverse", func(in []*Node) *Node {
				return weight(unitLowerInverse(Mul(in[0], BroadcastToDims(Reshape(triMask(in[0], T, false), 1, 1, T, T), B, H, T, T))))
			}, []*tensors.Tensor{randTensor(rng, B, H, T, T)}},
			{"transportedScores", func(in []*Node) *Node {
				return weight(transportedScores(in[0], in[1], in[2], MulScalar(Logistic(in[3]), 2)))
			}, []*tensors.Tensor{randTensor(rng, B, T, H, d), randTensor(rng, B, T, H, d), randTensor(rng, B, T, H, d), randTensor(rng, B, T, H)}},
			{"causalConv", func(in []*Node) *Node { return weight(causalConv(in[0], in[1])) },
				[]*tensors.Tensor{randTensor(rng, B, T, 4), randTensor(rng, 3, 4)}},
			{"prefixSum", func(in []*Node) *Node { return weight(prefixSum(in[0])) }, []*tensors.Tensor{randTensor(rng, B, T, H)}},
			{"logSigmoid", func(in []*Node) *Node { return weight(logSigmoid(MulScalar(in[0], 20))) }, []*tensors.Tensor{randTensor(rng, 3, T)}},
		}
		for _, cs := range cases {
			t.Run(cs.name, func(t *testing.T) { checkFiniteDifferences(t, cs.fn, cs.inputs, 10, 1e-6) })
		}
	}
}

// TestUnitLowerInverse: the blocked inverse times I + N is the identity
// (float64, with large entries so that cancellation would show).
func TestUnitLowerInverse(t *testing.T) {
	for _, T := range []int{1, 3, 8, 13} {
		rng := rand.New(rand.NewPCG(uint64(T), 1))
		n := make([]float64, T*T)
		for i := 0; i < T; i++ {
			for j := 0; j < i; j++ {
				n[i*T+j] = 2 * rng.NormFloat64()
			}
		}
		var y []float64
		err := catch("inverse test", func() error {
			exec, err := NewExec(testBackend(t), func(x *Node) *Node { return unitLowerInverse(Reshape(x, 1, 1, T, T)) })
			if err != nil {
				return err
			}
			defer exec.Finalize()
			out, err := exec.Exec(tensors.FromFlatDataAndDimensions(n, T, T))
			if err != nil {
				return err
			}
			y = tensors.MustCopyFlatData[float64](out[0])
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < T; i++ {
			for j := 0; j < T; j++ {
				var s float64 // ((I + N) Y)[i, j]
				for k := 0; k < T; k++ {
					m := n[i*T+k]
					if i == k {
						m = 1
					}
					s += m * y[k*T+j]
				}
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(s-want) > 1e-9 {
					t.Fatalf("T=%d: ((I+N) Y)[%d,%d] = %g, want %g", T, i, j, s, want)
				}
			}
		}
	}
}

// TestPathMutationsFail breaks one piece of the PaTH graph at a time; the
// float64 reference comparison must then fail (1e-4 of the logit scale is
// what TestForwardMatchesReference allows). Reversing the product order is
// not expressible in the UT form (its coefficients would depend on both
// ends of the route), so that mutation is checked in model/nativeeval.
func TestPathMutationsFail(t *testing.T) {
	for _, tc := range []struct{ piece, variant string }{{"gate", "path-fox"}, {"conv", "path"}, {"conv", "path-fox"}} {
		t.Run(tc.piece+"/"+tc.variant, func(t *testing.T) {
			pathBroken = tc.piece
			defer func() { pathBroken = "" }()
			worst, scale := forwardVsReference(t, tc.variant)
			if worst <= 1e-4*math.Max(1, scale) {
				t.Fatalf("with %s broken the forward still matches the reference (max error %g at scale %g)", tc.piece, worst, scale)
			}
			t.Logf("broken %s: max error %.3g at logit scale %.3g", tc.piece, worst, scale)
		})
	}
}

// TestPathTrainSmoke trains both PaTH variants a few steps with each
// trainer and checks the exported weights carry every PaTH tensor.
func TestPathTrainSmoke(t *testing.T) {
	data := newSynthData(23)
	for _, v := range []string{"path", "path-fox"} {
		for _, trainer := range []string{modelspec.TrainerGomlx, modelspec.TrainerNative} {
			t.Run(v+"/"+trainer, func(t *testing.T) {
				c := tinyConfig(t, v, 12)
				c.Trainer = trainer
				dir := t.TempDir()
				out := filepath.Join(dir, "out")
				if err := trainOnce(t, c, data, filepath.Join(dir, "work"), out); err != nil {
					t.Fatal(err)
				}
				set, err := weights.ReadFile(filepath.Join(out, WeightsFile))
				if err != nil {
					t.Fatal(err)
				}
				if set.Arch != c.Arch() || !set.Arch.Householder {
					t.Errorf("arch %+v, want %+v", set.Arch, c.Arch())
				}
				names := []string{modelspec.PathDown, modelspec.PathUp, modelspec.PathConvW, modelspec.PathWBeta, modelspec.PathBBeta}
				if v == "path-fox" {
					names = append(names, modelspec.FoxWGate, modelspec.FoxBGate)
				}
				for l := 0; l < c.Layers; l++ {
					for _, n := range names {
						if _, err := set.Get(blockName(l, n)); err != nil {
							t.Error(err)
						}
					}
				}
			})
		}
	}
}

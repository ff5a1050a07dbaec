package nativeeval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"routebench/internal/kerneltest"
	"routebench/modelspec"
	"routebench/modelspec/weights"
	"routebench/modelspec/weights/weightstest"
)

// weightsView gives the reference forward plain access to a set's tensors.
type weightsView struct {
	arch modelspec.Arch
	set  *weights.Set
	// ropeTheta and qk, when set, replace RoPE's frequencies and multiply
	// queries and keys (RoPE extended at inference; ropescaling_test.go).
	ropeTheta []float64
	qk        float64
}

func (w *weightsView) t(name string) []float32 {
	x, err := w.set.Get(name)
	if err != nil {
		panic(err)
	}
	return x
}

func blockName(n int) string { return fmt.Sprintf("block%03d/", n) }

// variantArch is the test shape's Arch of a registry variant: the parts
// that change the forward come from the registry (modelspec.Config.Arch),
// so a new variant is tested here the moment it is registered.
func variantArch(variant string) modelspec.Arch {
	return modelspec.Config{Variant: variant, Profile: "test", Vocab: 19, DModel: 32, Layers: 2, Heads: 2,
		DHidden: 48, Context: 16}.Arch()
}

// variants are every registry entry (nope, rope, alibi, random-qk/qkv,
// random-qkv-alibi, learned-*, path, path-fox).
var variants = modelspec.Variants()

// tolLogit: logits are a chain of float32 matrix products and attention;
// each stage adds relative error of order 1e-7..1e-6. We allow
// |logit - ref| <= tolLogit * (1 + max_v |ref logit|) per row: 2e-5 is ~340
// eps of the row's magnitude; the worst case measured over all variants was
// 1.4e-6 against the float64 reference and 8.8e-7 against gomlx. Any wrong
// formula moves logits by order 1.
const tolLogit = 2e-5

// tolProj replaces tolLogit for projected angles (learned-proj-qkv): psi^l_i
// sums the float32 projections a_s W_ang of float32 activations over the
// window, so an activation's rounding moves psi by up to ~i times its own
// error, and logits are less well conditioned than with a token table.
// Measured at L = 131 (RandomSet's 0.7 rad per token): native vs float64
// 1.7e-5, gomlx vs float64 1.3e-5, native vs gomlx 2.7e-5 of 1 + max |logit|.
// Wrong formulas still move logits by order 1.
const tolProj = 1e-4

// logitTol is the per-row logit tolerance scale of arch a.
func logitTol(a modelspec.Arch) float64 {
	if a.AngleProj {
		return tolProj
	}
	return tolLogit
}

func TestForwardMatchesReference(t *testing.T) {
	lengths := []int{1, 64, 65, 131}
	if testing.Short() {
		lengths = []int{1, 65}
	}
	kerneltest.Each(t, func(t *testing.T) {
		for _, v := range variants {
			for _, L := range lengths {
				t.Run(fmt.Sprintf("%s/L=%d", v, L), func(t *testing.T) {
					a := variantArch(v)
					set := weightstest.RandomSet(t, a, uint64(L))
					m, err := Load(set)
					if err != nil {
						t.Fatal(err)
					}
					r := rand.New(rand.NewPCG(uint64(L), 5))
					toks, tg := make([]int32, L), make([]int32, L)
					for i := range toks {
						toks[i], tg[i] = int32(r.IntN(a.Vocab)), int32(r.IntN(a.Vocab))
					}
					res, err := m.LogProbs(context.Background(), toks, tg, Options{ReturnLogits: true, Workers: 2})
					if err != nil {
						t.Fatal(err)
					}
					ref := refForward(&weightsView{arch: a, set: set}, toks)
					for i := 0; i < L; i++ {
						var mx, lse float64
						for _, x := range ref[i] {
							mx = math.Max(mx, math.Abs(x))
						}
						tol := logitTol(a) * (1 + mx)
						for c, x := range ref[i] {
							if g := float64(res.Logits[i][c]); math.Abs(g-x) > tol {
								t.Fatalf("row %d logit %d: got %.7g, want %.7g (tol %.2g)", i, c, g, x, tol)
							}
						}
						top := math.Inf(-1)
						for _, x := range ref[i] {
							top = math.Max(top, x)
						}
						for _, x := range ref[i] {
							lse += math.Exp(x - top)
						}
						want := ref[i][tg[i]] - top - math.Log(lse)
						// a log-prob is a difference of logits: twice the logit tolerance
						if math.Abs(res.LogProbs[i]-want) > 2*tol {
							t.Fatalf("row %d: log-prob %.7g, want %.7g", i, res.LogProbs[i], want)
						}
					}
				})
			}
		}
	})
}

// TestLogProbsDeterministic: the streaming output layer gives the same
// log-probs whether or not logits are returned, with and without
// diagnostics, and for any worker count (bitwise: the work split never
// changes the arithmetic), for random-qkv (rotations, value transport) and
// kerple-log (the bias table, built per layer by head-parallel workers).
func TestLogProbsDeterministic(t *testing.T) {
	for _, v := range []string{"random-qkv", "kerple-log"} {
		t.Run(v, func(t *testing.T) { testLogProbsDeterministic(t, variantArch(v)) })
	}
}

func testLogProbsDeterministic(t *testing.T, a modelspec.Arch) {
	m, err := Load(weightstest.RandomSet(t, a, 1))
	if err != nil {
		t.Fatal(err)
	}
	L := 300
	toks := make([]int32, L)
	for i := range toks {
		toks[i] = int32(i * 7 % a.Vocab)
	}
	ctx := context.Background()
	base, err := m.LogProbs(ctx, toks, toks, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Workers: 2, ReturnLogits: true}, {Workers: 3, FarDistances: []int{16, 4}}} {
		res, err := m.LogProbs(ctx, toks, toks, o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range base.LogProbs {
			if res.LogProbs[i] != base.LogProbs[i] {
				t.Fatalf("options %+v: position %d log-prob %v, want %v", o, i, res.LogProbs[i], base.LogProbs[i])
			}
		}
		if len(o.FarDistances) > 0 {
			if got := len(res.Heads); got != a.Layers*a.Heads {
				t.Fatalf("%d head stats, want %d", got, a.Layers*a.Heads)
			}
			for _, hs := range res.Heads {
				if len(hs.Far) != 2 || hs.Far[0].Distance != 16 || hs.Far[0].N != L-17 {
					t.Fatalf("head stats %+v: want far masses for 16 (over %d queries) and 4", hs, L-17)
				}
				if !(hs.Far[0].Mean <= hs.Far[1].Mean) || hs.Far[1].Mean < 0 || hs.Far[1].Max > 1+1e-6 {
					t.Fatalf("head stats %+v: far mass beyond 16 must not exceed that beyond 4, and lie in [0,1]", hs)
				}
				if hs.Entropy.Min < -1e-4 || hs.Entropy.Max > math.Log(float64(L))+1e-4 {
					t.Fatalf("entropy range [%g, %g] outside [0, log L]", hs.Entropy.Min, hs.Entropy.Max)
				}
			}
		}
	}
}

func TestLoadAndInputErrors(t *testing.T) {
	a := variantArch("random-qk")
	good := weightstest.RandomSet(t, a, 1)
	drop := func(name string) *weights.Set {
		var ts []weights.Tensor
		for _, x := range good.Tensors {
			if x.Name != name {
				ts = append(ts, x)
			}
		}
		s, err := weights.NewSet(a, ts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	reshape := func(name string, shape ...int) *weights.Set {
		var ts []weights.Tensor
		for _, x := range good.Tensors {
			if x.Name == name {
				x.Shape = shape
			}
			ts = append(ts, x)
		}
		s, err := weights.NewSet(a, ts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct {
		set  *weights.Set
		want string
	}{
		{drop("angles"), `"angles"`},
		{drop("block001/w2"), `"block001/w2"`},
		{reshape("block000/wq", 16, 64), "shape [16 64], want [32 32]"},
		{nil, "nil weights"},
	} {
		if _, err := Load(c.set); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load: error %v, want one mentioning %s", err, c.want)
		}
	}
	// A kerple-log file without a block's a_h: refused naming the tensor.
	ka := variantArch("kerple-log")
	var kts []weights.Tensor
	for _, x := range weightstest.RandomSet(t, ka, 1).Tensors {
		if x.Name != "block001/kerple_a" {
			kts = append(kts, x)
		}
	}
	noA, err := weights.NewSet(ka, kts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(noA); err == nil || !strings.Contains(err.Error(), `"block001/kerple_a"`) || !strings.Contains(err.Error(), "kerple-log/test") {
		t.Errorf("Load without block001/kerple_a: error %v, want one naming the tensor and the weights", err)
	}
	m, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		toks, tg []int32
		opts     Options
		want     string
	}{
		{nil, nil, Options{}, "empty"},
		{[]int32{1, 19}, nil, Options{}, "token 19 at position 1"},
		{[]int32{1, 2}, []int32{1, -1}, Options{}, "target -1 at position 1"},
		{[]int32{1, 2}, []int32{1}, Options{}, "1 targets for 2 tokens"},
		{[]int32{1}, nil, Options{FarDistances: []int{-2}}, "negative"},
	} {
		if _, err := m.LogProbs(ctx, c.toks, c.tg, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LogProbs(%v, %v): error %v, want one mentioning %q", c.toks, c.tg, err, c.want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.LogProbs(cctx, []int32{1, 2}, nil, Options{}); err == nil || !strings.Contains(err.Error(), "cancel") {
		t.Errorf("cancelled context: error %v", err)
	}
}

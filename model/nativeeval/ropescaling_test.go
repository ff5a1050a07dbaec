package nativeeval

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"routebench/modelspec/ropescale"
	"routebench/modelspec/weights/weightstest"
)

// refRopeScaling is each extension written out from docs/statistics.md
// (claim v3x) independently of modelspec: the frequencies theta'_p and the
// query/key multiplier. mutate breaks one rule (the test's control).
func refRopeScaling(method string, s float64, T, d int, base float64, mutate bool) ([]float64, float64) {
	theta := make([]float64, d/2)
	qk := 1.0
	for p := range theta {
		th := math.Pow(base, -2*float64(p)/float64(d))
		switch method {
		case "pi":
			theta[p] = th / s
			if mutate {
				theta[p] = th * s // scale inverted
			}
		case "ntk":
			b := base * math.Pow(s, float64(d)/float64(d-2))
			if mutate {
				b = base * s // the plain base scale, without NTK's exponent
			}
			theta[p] = math.Pow(b, -2*float64(p)/float64(d))
		case "yarn":
			lambda := 2 * math.Pi / th
			g := math.Min(1, math.Max(0, (float64(T)/lambda-1)/31))
			if mutate {
				g = 1 - g // ramp reversed
			}
			theta[p] = (1-g)*th/s + g*th
			qk = 0.1*math.Log(s) + 1
		}
	}
	return theta, qk
}

// TestRopeScalingMatchesReference: the native forward of a rope model with
// each extension matches the float64 reference with the hand-written
// frequencies and temperature, and fails it when the reference carries a
// mutation (so the comparison can fail). T = 512 puts YaRN's ramp across
// the test head's pairs (r from 0.8 to 81).
func TestRopeScalingMatchesReference(t *testing.T) {
	const L, T, s = 65, 512, 4.0
	a := variantArch("rope")
	set := weightstest.RandomSet(t, a, 41)
	m, err := Load(set)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(41, 5))
	toks := make([]int32, L)
	for i := range toks {
		toks[i] = int32(r.IntN(a.Vocab))
	}
	worst := func(logits [][]float32, ref [][]float64) float64 { // max |err| / tol over rows
		w := 0.0
		for i := range ref {
			mx := 0.0
			for _, x := range ref[i] {
				mx = math.Max(mx, math.Abs(x))
			}
			for c, x := range ref[i] {
				w = math.Max(w, math.Abs(float64(logits[i][c])-x)/(tolLogit*(1+mx)))
			}
		}
		return w
	}
	for _, method := range ropescale.Methods {
		rs := ropescale.Scaling{Method: method, Factor: s, TrainLen: T}
		res, err := m.LogProbs(context.Background(), toks, nil, Options{ReturnLogits: true, Workers: 2, RopeScaling: rs})
		if err != nil {
			t.Fatal(err)
		}
		th, qk := refRopeScaling(method, s, T, a.DHead(), a.RopeBase, false)
		if w := worst(res.Logits, refForward(&weightsView{arch: a, set: set, ropeTheta: th, qk: qk}, toks)); w > 1 {
			t.Errorf("%s s=%v: logits off the float64 reference by %.3g tolerances", method, s, w)
		}
		th, qk = refRopeScaling(method, s, T, a.DHead(), a.RopeBase, true)
		if w := worst(res.Logits, refForward(&weightsView{arch: a, set: set, ropeTheta: th, qk: qk}, toks)); w <= 1 {
			t.Errorf("%s s=%v: the mutated reference also matches (%.3g tolerances): the test cannot fail", method, s, w)
		}
	}
}

// TestRopeScalingUnitFactor: s = 1 is plain RoPE bit for bit, every method.
func TestRopeScalingUnitFactor(t *testing.T) {
	a := variantArch("rope")
	set := weightstest.RandomSet(t, a, 7)
	m, err := Load(set)
	if err != nil {
		t.Fatal(err)
	}
	toks := make([]int32, 40)
	for i := range toks {
		toks[i] = int32((i * 7) % a.Vocab)
	}
	plain, err := m.LogProbs(context.Background(), toks, toks, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range ropescale.Methods {
		got, err := m.LogProbs(context.Background(), toks, toks, Options{Workers: 2,
			RopeScaling: ropescale.Scaling{Method: method, Factor: 1, TrainLen: 16}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range plain.LogProbs {
			if got.LogProbs[i] != plain.LogProbs[i] {
				t.Fatalf("%s s=1: log-prob %d = %v, plain rope %v", method, i, got.LogProbs[i], plain.LogProbs[i])
			}
		}
	}
	// extensions are for rope models only
	mr, err := Load(weightstest.RandomSet(t, variantArch("random-qk"), 7))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mr.LogProbs(context.Background(), toks, nil, Options{RopeScaling: ropescale.Scaling{Method: "yarn", Factor: 2, TrainLen: 16}}); err == nil {
		t.Fatal("yarn on a random-qk model: want an error")
	}
}

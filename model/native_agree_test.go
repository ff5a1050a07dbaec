package model

import (
	"math"
	"testing"

	"routebench/internal/kerneltest"
	"routebench/model/nativetrain"
	"routebench/modelspec"
)

// The native trainer (model/nativetrain) against this package's gomlx
// model: one batch's loss and the gradient of every tensor, the native
// float32 pass against the gomlx graph in float64 (whose gradients
// TestModelGradients checks against float64 finite differences).

// gradTol bounds, per tensor, max |native - gomlx float64| / max |gomlx|:
// float32 arithmetic over a 2-layer model at T = 32 measured errors of
// about 1e-6 to 1e-5 of the largest element (printed by the test).
const gradTol = 2e-4

// float64Grads runs the gomlx loss and its gradient in float64 at vals.
func float64Grads(t *testing.T, c Config, specs []paramSpec, vals [][]float32, tok, tgt []int32, B, T int) (float64, [][]float64) {
	t.Helper()
	fn, inputs := float64Loss(t, c, specs, vals, tok, tgt, B, T)
	return gradients(t, fn, inputs)
}

// agreeConfig is randomSet's model (weights well away from init, so that
// attention and rotations matter) at the smoke context.
// angles: a learned variant's angle table random (randomAngleSet), not zero.
func agreeCase(t *testing.T, variant string, angles bool) (Config, []paramSpec, [][]float32, []int32, []int32) {
	t.Helper()
	return agreeCaseAt(t, variant, 0, angles)
}

// agreeCaseAt is agreeCase at context T (0: the smoke context).
func agreeCaseAt(t *testing.T, variant string, T int, angles bool) (Config, []paramSpec, [][]float32, []int32, []int32) {
	t.Helper()
	set, c := randomSetWith(t, variant, angles)
	if T > 0 {
		c.Context = T
	}
	c.Trainer = modelspec.TrainerNative
	specs := paramSpecs(c)
	vals := make([][]float32, len(specs))
	for i, s := range specs {
		x, err := set.Get(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		vals[i] = x
	}
	tok, tgt, err := newSynthData(c.Vocab).TrainBatch(1, 0, 2, c.Context)
	if err != nil {
		t.Fatal(err)
	}
	return c, specs, vals, tok, tgt
}

// TestNativeGradientsMatchGomlx runs under both kernel sets (portable Go
// and, where the CPU has it, AVX-512 assembly: kerneltest.Each).
func TestNativeGradientsMatchGomlx(t *testing.T) {
	kerneltest.Each(t, func(t *testing.T) {
		for _, v := range nativeVariants() {
			t.Run(v, func(t *testing.T) { checkNativeGradients(t, v, 0, false) })
		}
		// The learned tables at random angles: with the zero table every
		// rotation is the identity and a wrong one goes unseen (the
		// rotation-sign mutation shows it).
		for _, v := range learnedTableVariants() {
			t.Run(v+"/random-angles", func(t *testing.T) { checkNativeGradients(t, v, 0, true) })
		}
		// A context of 130 crosses two 64-column panels and ends in a partial
		// one: the causal tile skipping of the T x T products is exercised, and
		// PaTH's blocked triangular inverse recurses (above 32).
		// kerple-log: its dS-by-distance sums cross the forward's 96-row blocks.
		for _, v := range []string{"alibi", "kerple-log", "learned-qkv", "learned-proj-qkv", "path", "path-fox"} {
			t.Run(v+"/T=130", func(t *testing.T) { checkNativeGradients(t, v, 130, v == "learned-qkv") })
		}
		// PaTH's chunked transport (64-step blocks) carries queries through
		// two whole blocks between query and key only from four blocks on.
		t.Run("path/T=200", func(t *testing.T) { checkNativeGradients(t, "path", 200, false) })
	})
}

// learnedTableVariants are the native trainer's variants that learn an
// angle table (not an angle projection).
func learnedTableVariants() []string {
	var out []string
	for _, name := range nativeVariants() {
		if v, _ := modelspec.LookupVariant(name); v.Learned && !v.AngleProj {
			out = append(out, name)
		}
	}
	return out
}

func checkNativeGradients(t *testing.T, v string, T int, angles bool) {
	c, specs, vals, tok, tgt := agreeCaseAt(t, v, T, angles)
	want, wantG := float64Grads(t, c, specs, vals, tok, tgt, 2, c.Context)
	tr, err := nativetrain.New(c, nativeParams(c), fixedAngles(c), 0)
	if err != nil {
		t.Fatal(err)
	}
	loss, grads, err := tr.Gradients(vals, tok, tgt)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(float64(loss) - want); d > 1e-5*math.Max(1, want) {
		t.Errorf("loss: native %.7g, gomlx float64 %.7g", loss, want)
	}
	worst, _ := gradError(t, specs, grads, wantG, true)
	t.Logf("loss %.6f; worst tensor error %.2g of its largest element", loss, worst)
}

// gradError is the largest per-tensor relative gradient error; report
// flags every tensor beyond gradTol as a test error.
func gradError(t *testing.T, specs []paramSpec, grads [][]float32, wantG [][]float64, report bool) (worst float64, name string) {
	t.Helper()
	for i, s := range specs {
		var e, scale float64
		for j, g := range wantG[i] {
			e = math.Max(e, math.Abs(float64(grads[i][j])-g))
			scale = math.Max(scale, math.Abs(g))
		}
		rel := e / math.Max(scale, 1e-12)
		if rel > worst {
			worst, name = rel, s.Name
		}
		if report && (rel > gradTol || scale == 0) {
			t.Errorf("%s: max |native - gomlx| = %.3g, %.3g of the largest element %.3g (tolerance %g)", s.Name, e, rel, scale, gradTol)
		}
	}
	return worst, name
}

// TestNativeAgreementCatchesMutations breaks one piece of the native
// backward pass at a time (nativetrain.BreakForTest) and checks that the
// gradient comparison above fails for it: the agreement test can fail.
// Learned tables get random angles (with the zero table the rotation-sign
// mutation is invisible).
func TestNativeAgreementCatchesMutations(t *testing.T) {
	for _, mu := range nativetrain.Mutations() {
		piece := mu.Piece
		t.Run(piece, func(t *testing.T) {
			c, specs, vals, tok, tgt := agreeCaseAt(t, mu.Variant, mu.Context, true)
			_, wantG := float64Grads(t, c, specs, vals, tok, tgt, 2, c.Context)
			defer nativetrain.BreakForTest(piece)()
			tr, err := nativetrain.New(c, nativeParams(c), fixedAngles(c), 0)
			if err != nil {
				t.Fatal(err)
			}
			_, grads, err := tr.Gradients(vals, tok, tgt)
			if err != nil {
				t.Fatal(err)
			}
			worst, name := gradError(t, specs, grads, wantG, false)
			if worst <= gradTol {
				t.Fatalf("breaking %s left every gradient within %g (worst %.2g): the agreement test cannot see it", piece, gradTol, worst)
			}
			t.Logf("breaking %s: %s off by %.2g of its largest element", piece, name, worst)
		})
	}
}

// TestNativeLossCurveMatchesGomlx trains each variant with both trainers
// from the same initial weights on the same batches (the smoke shape) and
// compares the loss curves: the trainers differ only in float32 rounding,
// which Adam amplifies slowly, so the curves must stay within curveTol
// nats at every step, and the mean of the last 20 steps within
// curveEndTol. Measured (2 cores, 200 steps): largest step difference 1.4e-6
// to 2.1e-6 nats over the 7 default variants, 1.8e-6 (path) and 2.4e-6
// (path-fox), 2.1e-6 (learned-proj-qkv); last-20 means within 2e-7.
// Full mode: every variant, opt-in ones included, 200 steps (path and
// path-fox take ~50 s and ~36 s, nearly all of it gomlx's PaTH graph);
// -short: four, 40 steps.
func TestNativeLossCurveMatchesGomlx(t *testing.T) {
	variants, steps := nativeVariants(), 200
	if testing.Short() {
		variants, steps = []string{"rope", "learned-qkv", "learned-proj-qkv", "path-fox"}, 40
	}
	const curveTol, curveEndTol = 5e-4, 1e-4
	data := newSynthData(61)
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			c, err := shapeConfig("smoke", v, 61)
			if err != nil {
				t.Fatal(err)
			}
			c.Steps, c.CheckpointEvery, c.EvalEvery = steps, 0, 0
			curve := func(trainer string, lrScale float64) []float64 {
				c := c
				c.Trainer, c.LR = trainer, c.LR*lrScale
				dir := t.TempDir()
				if err := trainOnce(t, c, data, dir+"/work", dir+"/out"); err != nil {
					t.Fatal(err)
				}
				var rep TrainReport
				readJSON(t, dir+"/out/"+ReportFile, &rep)
				if len(rep.TrainLoss) != steps {
					t.Fatalf("%s: curve of %d steps, want %d", trainer, len(rep.TrainLoss), steps)
				}
				return rep.TrainLoss
			}
			a, b := curve(modelspec.TrainerNative, 1), curve(modelspec.TrainerGomlx, 1)
			worst, at, endDiff := curveDiff(a, b)
			t.Logf("loss %.4f -> %.4f (native) vs %.4f -> %.4f (gomlx); largest step difference %.2g at step %d; last-20 means differ by %.2g",
				a[0], a[steps-1], b[0], b[steps-1], worst, at, endDiff)
			if worst > curveTol || endDiff > curveEndTol {
				endA, endB := curveMean(a[steps-20:]), curveMean(b[steps-20:])
				t.Errorf("curves differ: largest step difference %.3g at step %d (tolerance %g), last-20 means %.4f vs %.4f (tolerance %g)",
					worst, at, curveTol, endA, endB, curveEndTol)
			}
		})
	}
}

// curveDiff is the largest step difference of two loss curves, its step,
// and the difference of their last-20 means.
func curveDiff(a, b []float64) (worst float64, at int, end float64) {
	for i := range a {
		if d := math.Abs(a[i] - b[i]); d > worst {
			worst, at = d, i
		}
	}
	n := len(a)
	return worst, at, math.Abs(curveMean(a[n-20:]) - curveMean(b[n-20:]))
}

func curveMean(x []float64) float64 {
	var s float64
	for _, y := range x {
		s += y
	}
	return s / float64(len(x))
}

// nativeVariants are the registry entries the native trainer trains
// (modelspec's Variant.NativeTrainer).
func nativeVariants() []string {
	var out []string
	for _, name := range modelspec.Variants() {
		if v, _ := modelspec.LookupVariant(name); v.NativeTrainer() {
			out = append(out, name)
		}
	}
	return out
}

package model

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"testing"

	"routebench/modelspec"
	"routebench/modelspec/weights"
	"routebench/modelspec/weights/weightstest"
)

// tinyConfig is smaller than the smoke profile, for tests that train often.
func tinyConfig(t testing.TB, variant string, steps int) Config {
	t.Helper()
	c, err := shapeConfig("smoke", variant, 23)
	if err != nil {
		t.Fatal(err)
	}
	c.DModel, c.Heads, c.DHidden, c.Context, c.Batch = 16, 2, 32, 16, 4
	c.Steps, c.Warmup, c.CheckpointEvery, c.EvalEvery, c.EvalBatches = steps, 2, 2, 3, 1
	return c
}

// forEachTrainer runs f once per trainer (native and gomlx) as subtests.
func forEachTrainer(t *testing.T, f func(t *testing.T, trainer string)) {
	for _, tr := range []string{modelspec.TrainerNative, modelspec.TrainerGomlx} {
		t.Run(tr, func(t *testing.T) { f(t, tr) })
	}
}

func trainOnce(t *testing.T, c Config, data Data, work, out string) error {
	t.Helper()
	return Train(context.Background(), c, data, work, out, nil)
}

func TestTrainSmoke(t *testing.T) {
	variants := modelspec.Variants()
	if testing.Short() {
		variants = []string{"rope", "random-qkv", "learned-qk"}
	}
	data := newSynthData(23)
	forEachTrainer(t, func(t *testing.T, trainer string) {
		for _, v := range variants {
			t.Run(v, func(t *testing.T) {
				if vv, _ := modelspec.LookupVariant(v); trainer == modelspec.TrainerNative && !vv.NativeTrainer() {
					t.Skip("the native trainer does not train " + v)
				}
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
				if set.Arch != c.Arch() {
					t.Errorf("arch %+v, want %+v", set.Arch, c.Arch())
				}
				_, err = set.Get("angles", c.Vocab, c.Heads, c.DModel/c.Heads/2)
				if wantAngles := set.Arch.HasAngleTable(); (err == nil) != wantAngles {
					t.Errorf("angles present = %v, want %v", err == nil, wantAngles)
				}
				for _, f := range []string{ReportFile, SpeedFile} {
					if _, err := os.Stat(filepath.Join(out, f)); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	})
}

func TestTrainDeterministicAndResume(t *testing.T) {
	forEachTrainer(t, testTrainDeterministicAndResume)
}

func testTrainDeterministicAndResume(t *testing.T, trainer string) {
	data := newSynthData(23)
	c := tinyConfig(t, "learned-qkv", 7)
	c.Trainer = trainer
	dir := t.TempDir()
	straight := filepath.Join(dir, "a")
	if err := trainOnce(t, c, data, filepath.Join(dir, "wa"), straight); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(straight, WeightsFile))

	// Same inputs, sequential executor (gomlx) or one worker (native):
	// identical bytes (the kernels' reduction order does not depend on the
	// parallelism).
	seq := c
	if trainer == modelspec.TrainerGomlx {
		seq.Backend = "go:ops_sequential,parallelism=0,dotgeneral_large"
	} else {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	}
	if err := trainOnce(t, seq, data, filepath.Join(dir, "wseq"), filepath.Join(dir, "seq")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "seq", WeightsFile)); !bytes.Equal(got, want) {
		t.Fatal("sequential and parallel executors trained different weights")
	}

	// Stop after step 5 (checkpoint at 4), rerun: resumes at 4.
	ctx, cancel := context.WithCancel(context.Background())
	work := filepath.Join(dir, "wb")
	out := filepath.Join(dir, "b")
	err := Train(ctx, c, data, work, out, func(p Progress) {
		if p.Step == 5 {
			cancel()
		}
	})
	if err == nil {
		t.Fatal("cancelled run returned no error")
	}
	if _, err := os.Stat(filepath.Join(out, WeightsFile)); err == nil {
		t.Fatal("cancelled run wrote weights")
	}
	resumed := -1
	if err := Train(context.Background(), c, data, work, out, func(p Progress) {
		if resumed < 0 {
			resumed = p.Step
		}
	}); err != nil {
		t.Fatal(err)
	}
	if resumed != 4 {
		t.Errorf("resumed at step %d, want 4", resumed)
	}
	got, _ := os.ReadFile(filepath.Join(out, WeightsFile))
	if !bytes.Equal(got, want) {
		t.Fatal("resumed run's weights differ from the uninterrupted run's")
	}
}

// TestLearnedGraphRotationMatchesHost checks that the in-graph float32
// prefix sum of the learned variants (training) and the host float64 path
// (Forward, native evaluator) give the same loss on a training-length window,
// with the zero angle table (identity rotations) and with random angles.
// Its mutation check: the host loss with every angle negated (rotations the
// wrong way round) must differ from the graph's by more than the tolerance,
// or the comparison could not see a sign error.
func TestLearnedGraphRotationMatchesHost(t *testing.T) {
	const tol = 1e-4
	for _, v := range []string{"learned-qk", "learned-qkv", "learned-proj-qkv"} {
		for _, random := range []bool{false, true} {
			if random && v == "learned-proj-qkv" { // no table: its angles come from angle_proj, random in both sets
				continue
			}
			set, c := randomSetWith(t, v, random)
			c.Batch, c.Context = 1, 48
			tr, err := newTrainer(c)
			if err != nil {
				t.Fatal(err)
			}
			specs := paramSpecs(c)
			vals := make([][]float32, len(specs))
			for i, s := range specs {
				vals[i], _ = set.Get(s.Name)
			}
			tr.setState(vals, vals, vals)
			win, _ := newSynthData(c.Vocab).EvalWindows(3, c.Context, 1)
			graphLoss, err := tr.evalLoss(win)
			tr.close()
			if err != nil {
				t.Fatal(err)
			}
			hostLoss := hostWindowLoss(t, set, win[0][:c.Context+1])
			t.Logf("%s (random angles %v): graph %.6f, host %.6f", v, random, graphLoss, hostLoss)
			if math.Abs(graphLoss-hostLoss) > tol {
				t.Fatalf("%s (random angles %v): in-graph rotation loss %.6f, host rotation loss %.6f", v, random, graphLoss, hostLoss)
			}
			if !random && v != "learned-proj-qkv" { // the zero table: negating it changes nothing
				continue
			}
			neg := make([][]float32, len(specs))
			for i, s := range specs {
				neg[i] = vals[i]
				if s.Name == modelspec.AngleTable || path.Base(s.Name) == modelspec.AngleProjName {
					neg[i] = make([]float32, len(vals[i]))
					for j, x := range vals[i] {
						neg[i][j] = -x
					}
				}
			}
			flipped, err := exportSet(c, specs, neg)
			if err != nil {
				t.Fatal(err)
			}
			flipLoss := hostWindowLoss(t, flipped, win[0][:c.Context+1])
			if math.Abs(graphLoss-flipLoss) <= tol {
				t.Errorf("%s (random angles %v): negated angles give host loss %.6f, within %g of the graph's %.6f: the comparison cannot see a sign error", v, random, flipLoss, tol, graphLoss)
			}
			t.Logf("%s (random angles %v): negated angles, host %.6f (off by %.2g)", v, random, flipLoss, math.Abs(graphLoss-flipLoss))
		}
	}
}

// hostWindowLoss is the mean next-token loss of set's full-attention
// forward (host rotations) on one window of L+1 tokens.
func hostWindowLoss(t *testing.T, set *weights.Set, win []int32) float64 {
	t.Helper()
	logits, err := forward(set, win[:len(win)-1])
	if err != nil {
		t.Fatal(err)
	}
	var loss float64
	for i, row := range logits {
		loss -= weightstest.LogProb(row, win[i+1])
	}
	return loss / float64(len(logits))
}

// TestResumeDrill kills runs at several points (on and between checkpoints,
// repeatedly) and checks the final weights and loss curve equal an
// uninterrupted run's, bit for bit. Full mode only.
func TestResumeDrill(t *testing.T) {
	if testing.Short() {
		t.Skip("full mode only")
	}
	data := newSynthData(23)
	forEachTrainer(t, func(t *testing.T, trainer string) {
		for _, v := range []string{"alibi", "random-qkv", "learned-qk"} {
			t.Run(v, func(t *testing.T) {
				c := tinyConfig(t, v, 14)
				c.Trainer = trainer
				c.CheckpointEvery, c.EvalEvery = 4, 5
				dir := t.TempDir()
				ref := filepath.Join(dir, "ref")
				if err := trainOnce(t, c, data, filepath.Join(dir, "wref"), ref); err != nil {
					t.Fatal(err)
				}
				work, out := filepath.Join(dir, "w"), filepath.Join(dir, "o")
				for _, stopAt := range []int{3, 6, 8, 13} {
					ctx, cancel := context.WithCancel(context.Background())
					err := Train(ctx, c, data, work, out, func(p Progress) {
						if p.Step == stopAt {
							cancel()
						}
					})
					cancel()
					if err == nil {
						t.Fatalf("run stopped at %d returned no error", stopAt)
					}
				}
				if err := trainOnce(t, c, data, work, out); err != nil {
					t.Fatal(err)
				}
				for _, f := range []string{WeightsFile, ReportFile} {
					a, _ := os.ReadFile(filepath.Join(ref, f))
					b, _ := os.ReadFile(filepath.Join(out, f))
					if len(a) == 0 || !bytes.Equal(a, b) {
						t.Fatalf("%s differs after four interruptions", f)
					}
				}
				var rb SpeedReport
				readJSON(t, filepath.Join(out, SpeedFile), &rb)
				var m map[string]float64
				readJSON(t, filepath.Join(out, SpeedFile), &m) // readers may decode it as numbers only
				if rb.ResumedFrom != 12 || m["resumed_from"] != 12 {
					t.Errorf("last resume from step %d, want 12", rb.ResumedFrom)
				}
			})
		}
	})
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// TestSmokeProfileAllVariants trains every variant at the smoke profile
// (byte vocabulary) and checks the loss came down. Full mode only; it is the
// profile CI runs through the pipeline.
func TestSmokeProfileAllVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("full mode only")
	}
	data := newSynthData(257)
	for _, v := range modelspec.Variants() {
		c, err := shapeConfig("smoke", v, 257)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := trainOnce(t, c, data, filepath.Join(dir, "w"), filepath.Join(dir, "o")); err != nil {
			t.Fatal(err)
		}
		var r TrainReport
		readJSON(t, filepath.Join(dir, "o", ReportFile), &r)
		first, last := r.TrainLoss[0], r.Eval[len(r.Eval)-1].Loss
		if !(last < first-1) {
			t.Errorf("%s: loss %.3f -> held-out %.3f: did not learn", v, first, last)
		}
		var sp SpeedReport
		readJSON(t, filepath.Join(dir, "o", SpeedFile), &sp)
		t.Logf("%s: loss %.3f -> held-out %.3f, %.3f s/step", v, first, last, sp.StepSeconds)
	}
}

// TestExecutorsAgreeAtCPUProfile runs two steps of the cpu profile with the
// parallel and the sequential simplego executor and compares the weights
// bit for bit: large enough that DotGeneral splits work across workers.
// Full mode only.
func TestExecutorsAgreeAtCPUProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("full mode only")
	}
	var states [][][]float32
	for _, be := range []string{"go", "go:ops_sequential,parallelism=0,dotgeneral_large"} {
		c, _ := shapeConfig("cpu", "random-qkv", 257)
		c.Backend = be
		tr, err := newTrainer(c)
		if err != nil {
			t.Fatal(err)
		}
		zeros := make([][]float32, len(tr.specs))
		for i, s := range tr.specs {
			zeros[i] = make([]float32, size(s.Shape))
		}
		tr.setState(initParams(c, tr.specs), zeros, zeros)
		data := newSynthData(257)
		for s := 0; s < 2; s++ {
			tok, tgt, _ := data.TrainBatch(c.Seed, s, c.Batch, c.Context)
			if _, _, err := tr.runStep(s, tok, tgt); err != nil {
				t.Fatal(err)
			}
		}
		p, _, _, err := tr.state()
		tr.close()
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, p)
	}
	for i := range states[0] {
		for j := range states[0][i] {
			if math.Float32bits(states[0][i][j]) != math.Float32bits(states[1][i][j]) {
				t.Fatalf("tensor %d element %d: parallel %g, sequential %g", i, j, states[0][i][j], states[1][i][j])
			}
		}
	}
}

package model

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"routebench/model/weights"
)

// tinyConfig is smaller than the smoke profile, for tests that train often.
func tinyConfig(t testing.TB, variant string, steps int) Config {
	t.Helper()
	c, err := ProfileConfig("smoke", variant, 23)
	if err != nil {
		t.Fatal(err)
	}
	c.DModel, c.Heads, c.DHidden, c.Context, c.Batch = 16, 2, 32, 16, 4
	c.Steps, c.Warmup, c.CheckpointEvery, c.EvalEvery, c.EvalBatches = steps, 2, 2, 3, 1
	return c
}

func trainOnce(t *testing.T, c Config, data Data, work, out string) error {
	t.Helper()
	return Train(context.Background(), c, data, work, out, nil)
}

func TestTrainSmoke(t *testing.T) {
	variants := Variants()
	if testing.Short() {
		variants = []string{"rope", "random-qkv", "learned-qk"}
	}
	data := newSynthData(23)
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			c := tinyConfig(t, v, 12)
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
			if wantAngles := set.Arch.Rotation == RotationAccumulated; (err == nil) != wantAngles {
				t.Errorf("angles present = %v, want %v", err == nil, wantAngles)
			}
			if _, err := os.Stat(filepath.Join(out, ReportFile)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestTrainDeterministicAndResume(t *testing.T) {
	data := newSynthData(23)
	c := tinyConfig(t, "learned-qkv", 7)
	dir := t.TempDir()
	straight := filepath.Join(dir, "a")
	if err := trainOnce(t, c, data, filepath.Join(dir, "wa"), straight); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(straight, WeightsFile))

	// Stop after step 5 (checkpoint at 4), rerun: resumes at 4.
	ctx, cancel := context.WithCancel(context.Background())
	work := filepath.Join(dir, "wb")
	out := filepath.Join(dir, "b")
	err := Train(ctx, c, data, work, out, func(done, total int64, note string) {
		if done == 5 {
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
	if err := Train(context.Background(), c, data, work, out, func(done, total int64, note string) {
		if resumed < 0 {
			resumed = int(done)
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
// (Forward, native evaluator) give the same loss on a training-length window.
func TestLearnedGraphRotationMatchesHost(t *testing.T) {
	for _, v := range []string{"learned-qk", "learned-qkv"} {
		set, c := randomSet(t, v)
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
		logits, err := Forward(set, win[0][:c.Context])
		if err != nil {
			t.Fatal(err)
		}
		var hostLoss float64
		for i, row := range logits {
			mx := math.Inf(-1)
			for _, x := range row {
				mx = math.Max(mx, float64(x))
			}
			var z float64
			for _, x := range row {
				z += math.Exp(float64(x) - mx)
			}
			hostLoss += mx + math.Log(z) - float64(row[win[0][i+1]])
		}
		hostLoss /= float64(len(logits))
		if math.Abs(graphLoss-hostLoss) > 1e-4 {
			t.Fatalf("%s: in-graph rotation loss %.6f, host rotation loss %.6f", v, graphLoss, hostLoss)
		}
	}
}

package model

import (
	"bytes"
	"context"
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

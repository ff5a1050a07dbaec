package model

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBackendNames(t *testing.T) {
	// A noxla build names the build tag; the XLA build (plain go test, cgo)
	// has no plugin here and must name how to give one.
	want := "noxla"
	if XLABackend != nil {
		want = "PJRT_PLUGIN_LIBRARY_PATH"
	}
	if XLABackend == nil || os.Getenv("PJRT_PLUGIN_LIBRARY_PATH") == "" && os.Getenv("GOMLX_BACKEND") == "" {
		if _, err := NewBackend("xla:cuda"); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("xla request without a plugin (want an error naming %s): %v", want, err)
		}
	}
	if _, err := NewBackend("tpu"); err == nil {
		t.Fatal("unknown backend accepted")
	}
	if _, err := NewBackend("go"); err != nil {
		t.Fatal(err)
	}
}

func TestCheckpointDamageIsAMiss(t *testing.T) {
	data := newSynthData(23)
	c := tinyConfig(t, "rope", 2)
	dir := t.TempDir()
	stale := filepath.Join(dir, ".checkpoint-rope.rbck.tmp-123") // left by a killed write
	os.WriteFile(stale, []byte("half a checkpoint"), 0o644)
	if err := trainOnce(t, c, data, dir, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("stale temp file of a killed write was not removed")
	}
	specs := paramSpecs(c)
	if ck, note := readCheckpoint(dir, c, specs); ck == nil || ck.header.Step != 2 {
		t.Fatalf("final checkpoint not readable: %s", note)
	}
	path := checkpointPath(dir, c)
	b, _ := os.ReadFile(path)
	b[len(b)/2] ^= 1
	os.WriteFile(path, b, 0o644)
	if ck, note := readCheckpoint(dir, c, specs); ck != nil || !strings.Contains(note, "checksum") {
		t.Fatalf("damaged checkpoint: %v %q", ck != nil, note)
	}
	os.WriteFile(path, b[:100], 0o644)
	if ck, _ := readCheckpoint(dir, c, specs); ck != nil {
		t.Fatal("truncated checkpoint loaded")
	}
	b[len(b)/2] ^= 1
	os.WriteFile(path, b, 0o644)
	other := c
	other.LR *= 2
	if ck, note := readCheckpoint(dir, other, specs); ck != nil || !strings.Contains(note, "different config") {
		t.Fatalf("checkpoint of another config: %q", note)
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(entries) != 0 {
		t.Fatalf("temp files left: %v", entries)
	}
}

func TestDivergenceStopsWithoutOutput(t *testing.T) {
	forEachTrainer(t, testDivergenceStopsWithoutOutput)
}

func testDivergenceStopsWithoutOutput(t *testing.T, trainer string) {
	c := tinyConfig(t, "random-qk", 20)
	c.LR, c.MinLR, c.Clip, c.Warmup = 1e30, 0, 0, 0
	c.Trainer = trainer
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	err := trainOnce(t, c, newSynthData(23), filepath.Join(dir, "work"), out)
	if err == nil || !strings.Contains(err.Error(), "random-qk") || !strings.Contains(err.Error(), "diverged at step") {
		t.Fatalf("want a divergence error naming variant and step, got %v", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("diverged run left %d files in outDir", len(entries))
	}
}

type failingData struct{ *synthData }

func (failingData) TrainBatch(uint64, int, int, int) ([]int32, []int32, error) {
	return nil, nil, errors.New("shard missing")
}

func TestDataErrorsAreWrapped(t *testing.T) {
	c := tinyConfig(t, "nope", 2)
	dir := t.TempDir()
	err := Train(context.Background(), c, failingData{newSynthData(23)}, dir, filepath.Join(dir, "o"), nil)
	if err == nil || !strings.Contains(err.Error(), "shard missing") || !strings.Contains(err.Error(), "step 0") {
		t.Fatalf("data error: %v", err)
	}
}

func TestAttentionBias(t *testing.T) {
	b := attentionBias(4, 3, true)
	if b[0*9+2*3+0] != float32(-2./4) || b[3*9+1*3+0] != float32(-1./256) || b[0*9+0*3+1] != maskedLogit {
		t.Fatalf("bias rows %v", b[:9])
	}
}

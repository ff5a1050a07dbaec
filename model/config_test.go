package model

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVariantsRegistryOrder(t *testing.T) {
	want := "nope rope alibi random-qk random-qkv learned-qk learned-qkv"
	if got := strings.Join(Variants(), " "); got != want {
		t.Fatalf("Variants() = %q, want %q", got, want)
	}
	if _, err := LookupVariant("pope"); err == nil || !strings.Contains(err.Error(), "pope") {
		t.Fatalf("unknown variant error %v", err)
	}
}

func TestProfileConfigs(t *testing.T) {
	for _, p := range Profiles {
		for _, v := range Variants() {
			vocab := 257
			if p == "paper" {
				vocab = 50257
			}
			c, err := ProfileConfig(p, v, vocab)
			if err != nil {
				t.Fatalf("%s/%s: %v", p, v, err)
			}
			if c.Arch().Validate() != nil {
				t.Fatalf("%s/%s: invalid arch", p, v)
			}
		}
	}
	c, _ := ProfileConfig("paper", "rope", 50257)
	if c.Layers != 16 || c.DModel != 768 || c.Heads != 12 || c.Context != 512 {
		t.Fatalf("paper profile %+v", c)
	}
	if _, err := ProfileConfig("huge", "rope", 257); err == nil {
		t.Fatal("unknown profile accepted")
	}
	c.SigmaMin = 2
	c.Variant = "random-qk"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), ParamSigmaMin) {
		t.Fatalf("bad sigma accepted: %v", err)
	}
}

func TestBackendNames(t *testing.T) {
	if _, err := NewBackend("xla:cuda"); err == nil || !strings.Contains(err.Error(), "noxla") {
		t.Fatalf("xla request in a noxla build: %v", err)
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
	c := tinyConfig(t, "random-qk", 20)
	c.LR, c.MinLR, c.Clip, c.Warmup = 1e30, 0, 0, 0
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

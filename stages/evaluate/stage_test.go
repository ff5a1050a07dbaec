package evaluate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"routebench/artifacts"
	"routebench/pipeline"
	"routebench/spec"
	"routebench/spec/weights"
)

// weightsArtifact stores a tiny weights file claiming the given variant.
func weightsArtifact(t *testing.T, variant, profile string, T int) *artifacts.Artifact {
	t.Helper()
	store, err := artifacts.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	arch := spec.Arch{Variant: variant, Profile: profile, Vocab: 3, DModel: 4, Layers: 1, Heads: 2, DHidden: 4,
		Context: T, NormEps: 1e-5, RopeBase: 10000, Rotation: "rope"}
	set, err := weights.NewSet(arch, []weights.Tensor{{Name: "embed", Shape: []int{3, 4}, Data: make([]float32, 12)}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := set.Write(&buf); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, spec.WeightsFile), buf.Bytes(), 0o644)
	art, err := store.Put(artifacts.ActionID{1}, "train/"+variant, dir)
	if err != nil {
		t.Fatal(err)
	}
	return art
}

func runWith(t *testing.T, cfg Config, w *artifacts.Artifact) error {
	t.Helper()
	st := Stage(cfg, &pipeline.Stage{Name: "tokenize"}, &pipeline.Stage{Name: "train/" + cfg.Variant})
	out := t.TempDir()
	rc := &pipeline.RunContext{Context: context.Background(), Stage: st, OutDir: out, WorkDir: t.TempDir(),
		Inputs: map[string]*artifacts.Artifact{WeightsInput: w}, Logf: t.Logf, Progress: func(int64, int64, string) {}}
	err := st.Run(rc)
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("a failed evaluation wrote %d files", len(ents))
	}
	return err
}

func TestEvaluateRejectsBadInput(t *testing.T) {
	good := NewConfig("alibi", "smoke", 32, []int{1, 2, 4}, 2, 7)
	// Weights of another variant than claimed.
	err := runWith(t, good, weightsArtifact(t, "rope", "smoke", 32))
	if err == nil || !strings.Contains(err.Error(), "the weights input is rope/smoke at context 32, not alibi/smoke") {
		t.Fatalf("wrong variant: %v", err)
	}
	// Another profile.
	err = runWith(t, good, weightsArtifact(t, "alibi", "cpu", 32))
	if err == nil || !strings.Contains(err.Error(), "alibi/cpu") {
		t.Fatalf("wrong profile: %v", err)
	}
	// A length the protocol does not allow.
	bad := NewConfig("alibi", "smoke", 32, []int{1, 3}, 2, 7)
	err = runWith(t, bad, weightsArtifact(t, "alibi", "smoke", 32))
	if err == nil || !strings.Contains(err.Error(), "length 3 x T is not allowed") {
		t.Fatalf("length 3T: %v", err)
	}
	noBase := NewConfig("alibi", "smoke", 32, []int{2, 4}, 2, 7)
	if err := noBase.Validate(); err == nil || !strings.Contains(err.Error(), "must start at 1") {
		t.Fatalf("no base length: %v", err)
	}
}

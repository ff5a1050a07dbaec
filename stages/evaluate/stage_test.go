package evaluate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"routebench/artifacts"
	"routebench/modelspec"
	"routebench/modelspec/weights"
	"routebench/pipeline"
	"routebench/stages/tokenize"
	"routebench/stages/tokenize/shards"
)

// weightsArtifact stores a tiny weights file claiming the given variant.
func weightsArtifact(t *testing.T, variant, profile string, T int) *artifacts.Artifact {
	t.Helper()
	store, err := artifacts.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	arch := modelspec.Arch{Variant: variant, Profile: profile, Vocab: 3, DModel: 4, Layers: 1, Heads: 2, DHidden: 4,
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
	os.WriteFile(filepath.Join(dir, modelspec.WeightsFile), buf.Bytes(), 0o644)
	art, err := store.Put(artifacts.ActionID{1}, "train/"+variant, dir)
	if err != nil {
		t.Fatal(err)
	}
	return art
}

// shardsArtifact tokenizes (bytes) a corpus of one training book and one
// held-out book of heldOut bytes, so the held-out split has heldOut+1 tokens
// (the end-of-document token), and stores the output as the tokenize stage
// would.
func shardsArtifact(t *testing.T, heldOut int) *artifacts.Artifact {
	t.Helper()
	corpus := t.TempDir()
	for name, n := range map[string]int{"train.txt": 300, "held.txt": heldOut} {
		if err := os.WriteFile(filepath.Join(corpus, name), []byte(strings.Repeat("x", n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := tokenize.Config{Tokenizer: tokenize.TokenizerBytes, Corpus: []string{corpus}, HeldOut: []string{"held.txt"}, ShardTokens: 1 << 10}
	out := filepath.Join(t.TempDir(), "shards")
	if err := tokenize.Run(context.Background(), cfg, out, nil); err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	art, err := store.Put(artifacts.ActionID{2}, "tokenize", out)
	if err != nil {
		t.Fatal(err)
	}
	return art
}

func runWith(t *testing.T, cfg Config, tokenized, w *artifacts.Artifact) error {
	t.Helper()
	st := Stage(cfg, &pipeline.Stage{Name: "tokenize"}, &pipeline.Stage{Name: "train/" + cfg.Variant})
	out := t.TempDir()
	rc := &pipeline.RunContext{Context: context.Background(), Stage: st, OutDir: out, WorkDir: t.TempDir(),
		Inputs: map[string]*artifacts.Artifact{shards.Input: tokenized, WeightsInput: w}, Logf: t.Logf, Progress: func(int64, int64, string) {}}
	err := st.Run(rc)
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("a failed evaluation wrote %d files", len(ents))
	}
	return err
}

func TestEvaluateRejectsBadInput(t *testing.T) {
	tokenized := shardsArtifact(t, 300) // enough for 2 windows of 4 x 32
	good := NewConfig("alibi", "smoke", 32, []int{1, 2, 4}, 2, 7)
	// Weights of another variant than claimed.
	err := runWith(t, good, tokenized, weightsArtifact(t, "rope", "smoke", 32))
	if err == nil || !strings.Contains(err.Error(), "the weights input is rope/smoke at context 32, not alibi/smoke") {
		t.Fatalf("wrong variant: %v", err)
	}
	// Another profile.
	err = runWith(t, good, tokenized, weightsArtifact(t, "alibi", "cpu", 32))
	if err == nil || !strings.Contains(err.Error(), "alibi/cpu") {
		t.Fatalf("wrong profile: %v", err)
	}
	// A length the protocol does not allow.
	bad := NewConfig("alibi", "smoke", 32, []int{1, 3}, 2, 7)
	err = runWith(t, bad, tokenized, weightsArtifact(t, "alibi", "smoke", 32))
	if err == nil || !strings.Contains(err.Error(), "length 3 x T is not allowed") {
		t.Fatalf("length 3T: %v", err)
	}
	noBase := NewConfig("alibi", "smoke", 32, []int{2, 4}, 2, 7)
	if err := noBase.Validate(); err == nil || !strings.Contains(err.Error(), "must start at 1") {
		t.Fatalf("no base length: %v", err)
	}
}

// TestEvaluateRejectsShortHeldOut: the longest window must fit in the
// held-out split, and the stage says so before it reads the weights (these
// claim another variant, an error that would come later).
func TestEvaluateRejectsShortHeldOut(t *testing.T) {
	tokenized := shardsArtifact(t, 100) // 101 tokens; 2 windows of 4 x 32 need 2 x 129
	cfg := NewConfig("alibi", "smoke", 32, []int{1, 2, 4}, 2, 7)
	err := runWith(t, cfg, tokenized, weightsArtifact(t, "rope", "smoke", 32))
	for _, want := range []string{"evaluate/alibi", "held-out split has 101 tokens (bytes)", "2 windows of the longest length (4 x T = 128) need 258",
		"hold out more text", "evaluate shorter windows"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("a window longer than the held-out split: error %v does not say %q", err, want)
		}
	}
	// The boundary: windows x (L+1) tokens are enough, one fewer is not.
	for have, ok := range map[int64]bool{258: true, 257: false} {
		info := shards.Info{Tokenizer: "bytes", Splits: map[string]shards.SplitInfo{shards.SplitHeldOut: {Tokens: have}}}
		if err := cfg.checkHeldOut(info); (err == nil) != ok {
			t.Errorf("held-out split of %d tokens for 128-token windows: %v", have, err)
		}
	}
}

// An evaluation corpus too short for the longest window, or tokenized
// with another vocabulary than the model's, is refused with what it has
// and what it needs.
func TestEvalCorpusErrors(t *testing.T) {
	tokenized, _ := evalCorpus(t, map[string]string{"a.txt": strings.Repeat("x", 30), "b.txt": strings.Repeat("y", 20)})
	cfg := NewConfig("alibi", "smoke", 16, []int{1, 2, 4}, 2, 7)
	cfg.Corpus = "owt.parquet"
	err := runWith(t, cfg, tokenized, weightsArtifact(t, "alibi", "smoke", 16))
	for _, want := range []string{"evaluate/alibi@owt.parquet: the evaluation corpus owt.parquet has 52 tokens (bytes)",
		"2 windows of the longest length (4 x T = 64) need 130", "give a longer evaluation corpus, set windows lower or evaluate shorter windows"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("a too-short evaluation corpus: error %v does not say %q", err, want)
		}
	}
	cfg.Multipliers, cfg.Windows = []int{1}, 1 // fits the 52 tokens: the vocabulary check is next
	err = runWith(t, cfg, tokenized, weightsArtifact(t, "alibi", "smoke", 16))
	for _, want := range []string{"evaluate/alibi@owt.parquet: the evaluation corpus owt.parquet is tokenized with bytes (vocabulary 257)",
		"trained on a vocabulary of 3", "tokenize it with the training tokenizer"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("another vocabulary: error %v does not say %q", err, want)
		}
	}
}

package shards_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"routebench/artifacts"
	"routebench/pipeline"
	"routebench/stages/tokenize"
	"routebench/stages/tokenize/shards"
)

// TestOpenInput opens a stored tokenize artifact as a consuming stage does:
// the runner's own file in it is not a shard and must be passed over.
func TestOpenInput(t *testing.T) {
	out, _ := runOK(t, testConfig(tokenize.TokenizerBytes, smallCorpus(t, 6)))
	if err := os.WriteFile(filepath.Join(out, pipeline.RunInfoFile), []byte(`{"wall_seconds": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "weights.rbw"), []byte("not shards"), 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tokenized, err := store.Put(artifacts.ActionID{1}, "tokenize", out)
	if err != nil {
		t.Fatal(err)
	}
	weights, err := store.Put(artifacts.ActionID{2}, "train/rope", other)
	if err != nil {
		t.Fatal(err)
	}
	rc := &pipeline.RunContext{Context: context.Background(), Stage: &pipeline.Stage{Name: "evaluate/rope"},
		Inputs: map[string]*artifacts.Artifact{shards.Input: tokenized, "weights": weights}}

	d, err := shards.OpenInput(rc, shards.Input)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if info := d.Info(); info.Splits[shards.SplitTrain].Tokens == 0 || info.Splits[shards.SplitHeldOut].Tokens == 0 || d.Manifest() == nil {
		t.Errorf("opened %+v, manifest %v", info, d.Manifest() != nil)
	}
	if _, err := shards.OpenInput(rc, "weights"); err == nil || !strings.Contains(err.Error(), `stage evaluate/rope: opening the shards of input "weights"`) {
		t.Errorf("an artifact without shards: %v", err)
	}
	if _, err := shards.OpenInput(rc, "corpus"); err == nil || !strings.Contains(err.Error(), `no input "corpus" declared`) {
		t.Errorf("an undeclared input: %v", err)
	}
}

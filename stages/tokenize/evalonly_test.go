package tokenize

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"routebench/pipeline"
	"routebench/stages/tokenize/shards"
)

// An evaluation-only corpus holds every document out, in corpus order,
// trains on nothing (no train shards), says so in the manifest, and has a
// key (so a dataset id) of its own: the same files as a training corpus
// are other shards.
func TestEvalOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "eval")
	writeFiles(t, dir, map[string]string{"a.txt": "first document", "b.txt": "second", "c.jsonl": `{"text":"third"}` + "\n"})
	cfg := testConfig(TokenizerBytes, dir)
	cfg.EvalOnly = true
	_, paths := runOK(t, cfg)
	d, m := manifestOf(t, paths)
	if got, want := streamText(t, paths, shards.SplitHeldOut), "first document|second|third|"; got != want {
		t.Errorf("held-out stream %q, want every document in corpus order %q", got, want)
	}
	if _, err := d.Tokens(shards.SplitTrain); err == nil {
		t.Error("an evaluation-only corpus has a train split")
	}
	if _, _, err := d.TrainBatch(1, 0, 1, 4); err == nil {
		t.Error("TrainBatch on an evaluation-only corpus did not fail")
	}
	if m.HeldOut.Rule != HeldOutAll || m.Splits[shards.SplitHeldOut].Documents != 3 || m.Splits[shards.SplitTrain].Tokens != 0 {
		t.Errorf("manifest held_out %+v, splits %+v", m.HeldOut, m.Splits)
	}
	if info := d.Info(); !strings.HasPrefix(info.SplitRule, "evaluation only") {
		t.Errorf("split rule %q", info.SplitRule)
	}

	// The split settings choose nothing, so they are not in the key; the
	// mode is, so the same files as training text key differently.
	other := cfg
	other.ValFraction, other.Seed, other.HeldOut, other.MinHeldOutTokens = 0.3, 9, []string{"a"}, 100
	k1, err := NewKey(cfg)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := NewKey(other)
	if err != nil {
		t.Fatal(err)
	}
	j1, _ := pipeline.CanonicalConfig(k1)
	j2, _ := pipeline.CanonicalConfig(k2)
	if string(j1) != string(j2) {
		t.Errorf("split settings change an evaluation-only key:\n%s\n%s", j1, j2)
	}
	train := cfg
	train.EvalOnly = false
	k3, err := NewKey(train)
	if err != nil {
		t.Fatal(err)
	}
	j3, _ := pipeline.CanonicalConfig(k3)
	if string(j3) == string(j1) || strings.Contains(string(j3), "eval_only") {
		t.Errorf("training key %s: must differ from the evaluation-only key %s and not name eval_only", j3, j1)
	}
	var raw map[string]any
	if err := json.Unmarshal(j1, &raw); err != nil || raw["eval_only"] != true {
		t.Errorf("evaluation-only key %s does not say eval_only", j1)
	}
}

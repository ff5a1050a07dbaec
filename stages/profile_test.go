package stages

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"routebench/spec"
)

// Every built-in profile gives a valid training config for every variant,
// and the paper profile is the paper's model.
func TestBuiltinProfilesTrainConfigs(t *testing.T) {
	for _, name := range ProfileNames() {
		p, err := LoadProfile(name, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range spec.Variants() {
			c := p.Train
			c.Variant, c.Profile, c.Vocab = v, name, vocabOf(p.Tokenizer)
			if err := c.Validate(); err != nil {
				t.Errorf("%s/%s: %v", name, v, err)
			}
		}
	}
	p, _ := LoadProfile("paper", "")
	if c := p.Train; c.Layers != 16 || c.DModel != 768 || c.Heads != 12 || c.Context != 512 {
		t.Fatalf("paper profile %+v", c)
	}
}

// Overrides reach nested training and theory fields; the fields the
// pipeline sets are refused with the fix.
func TestProfileOverrides(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		f := filepath.Join(dir, "o.json")
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	p, err := LoadProfile("smoke", write(`{"train": {"steps": 4, "sigma_min": 0.1}, "theory": {"seed": 9}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Train.Steps != 4 || p.Train.SigmaMin != 0.1 || p.Train.DModel != 32 || p.Theory.Seed != 9 || p.Theory.Mixing.Queries == 0 {
		t.Fatalf("overrides not applied field by field: train %+v, theory seed %d", p.Train, p.Theory.Seed)
	}
	plan, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range plan.Stages {
		if c, ok := s.Config.(spec.Config); ok && (c.Steps != 4 || c.Warmup != 4) {
			t.Fatalf("%s: steps %d warmup %d, want 4 and the warmup clamped to 4", s.Name, c.Steps, c.Warmup)
		}
	}
	if _, err := LoadProfile("smoke", write(`{"train": {"vocab": 9}}`)); err == nil || !strings.Contains(err.Error(), "drop them") {
		t.Fatalf("train.vocab override: %v", err)
	}
	if _, err := LoadProfile("smoke", write(`{"train": {"d_modle": 9}}`)); err == nil || !strings.Contains(err.Error(), "d_modle") {
		t.Fatalf("unknown nested field: %v", err)
	}
}

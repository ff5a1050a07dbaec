package planner

import (
	"testing"

	"routebench/internal/corpustest"
	"routebench/modelspec"
)

// PaTH variants are in the default set, and they train with the native
// trainer like every other variant on the Go backend (gomlx on request).
func TestPathVariantsDefault(t *testing.T) {
	if got := trainerFor("go", "path"); got != modelspec.TrainerNative {
		t.Errorf("trainerFor(go, path) = %q, want native", got)
	}
	if got := trainerFor("go", "rope"); got != modelspec.TrainerNative {
		t.Errorf("trainerFor(go, rope) = %q, want native", got)
	}
	def, err := LoadProfile("cpu", "")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Build(def)
	if err != nil {
		corpustest.Missing(t, err)
	}
	for _, want := range []string{"train/path", "train/path-fox", "evaluate/path-fox"} {
		if _, ok := plan.Stage(want); !ok {
			t.Errorf("the cpu profile's default plan has no %s", want)
		}
	}
	trainers := map[string]string{}
	for _, s := range plan.Stages {
		if c, ok := s.Config.(modelspec.Config); ok {
			trainers[c.Variant] = c.Trainer
		}
	}
	for _, v := range []string{"rope", "path", "path-fox"} {
		if trainers[v] != modelspec.TrainerNative {
			t.Errorf("resolved trainers %v, want native for %s", trainers, v)
		}
	}
	p, err := LoadProfileWith("cpu", Overrides{Set: []string{"variants=path", "train.trainer=gomlx"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(p); err != nil {
		t.Errorf("path with trainer gomlx: %v", err)
	}
}

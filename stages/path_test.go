package stages

import (
	"strings"
	"testing"

	"routebench/modelspec"
)

// PaTH variants are opt-in: no profile trains them by default; named with
// --set variants=..., they train with the native trainer like every other
// variant on the Go backend.
func TestPathVariantsOptIn(t *testing.T) {
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
		t.Skipf("default corpus not available (run `make corpus`): %v", err)
	}
	for _, s := range plan.Stages {
		if strings.Contains(s.Name, "path") {
			t.Errorf("the cpu profile's default plan has %s", s.Name)
		}
	}
	p, err := LoadProfileWith("cpu", Overrides{Set: []string{"variants=rope,path,path-fox"}})
	if err != nil {
		t.Fatal(err)
	}
	plan, err = Build(p)
	if err != nil {
		t.Fatal(err)
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
	p, err = LoadProfileWith("cpu", Overrides{Set: []string{"variants=path", "train.trainer=gomlx"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(p); err != nil {
		t.Errorf("path with trainer gomlx: %v", err)
	}
}

package stages

import (
	"strings"
	"testing"

	"routebench/modelspec"
)

// PaTH variants are opt-in: no profile trains them by default; named with
// --set variants=..., they train with gomlx (the native trainer has no
// backward pass for them), and asking for the native trainer is an error
// that names the fix.
func TestPathVariantsOptIn(t *testing.T) {
	if got := trainerFor("go", "path"); got != modelspec.TrainerGomlx {
		t.Errorf("trainerFor(go, path) = %q, want gomlx", got)
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
	if trainers["path"] != modelspec.TrainerGomlx || trainers["path-fox"] != modelspec.TrainerGomlx || trainers["rope"] != modelspec.TrainerNative {
		t.Errorf("resolved trainers %v, want gomlx for path and path-fox, native for rope", trainers)
	}
	p, err = LoadProfileWith("cpu", Overrides{Set: []string{"variants=path", "train.trainer=native"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(p); err == nil || !strings.Contains(err.Error(), "gomlx") {
		t.Errorf("path with trainer native: want an error naming gomlx, got %v", err)
	}
}

package planner

import (
	"strings"
	"testing"

	"routebench/internal/corpustest"
	"routebench/stages/report"
)

// The cpu profile spends its seeds on the paired claims' variants: they
// train at every seed, the others once (seed_variants); emptying the field
// trains every variant at every seed, and a misspelt name is an error.
func TestSeedVariants(t *testing.T) {
	p, err := LoadProfile("cpu", "")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Build(p)
	if err != nil {
		corpustest.Missing(t, err)
		return
	}
	for _, want := range []string{"train/rope@seed25", "evaluate/random-qkv@seed22", "train/alibi@seed23", "train/nope", "evaluate/path"} {
		if _, ok := plan.Stage(want); !ok {
			t.Errorf("cpu plan has no %s", want)
		}
	}
	for _, not := range []string{"train/nope@seed22", "evaluate/path@seed23", "train/learned-qkv@seed22"} {
		if _, ok := plan.Stage(not); ok {
			t.Errorf("cpu plan has %s; seed_variants %v should train it once", not, p.SeedVariants)
		}
	}
	rep, _ := plan.Stage(report.Kind)
	if got := rep.Config.(report.Config).SeedVariants; strings.Join(got, ",") != strings.Join(p.SeedVariants, ",") {
		t.Errorf("report config seed_variants %v, want the profile's %v", got, p.SeedVariants)
	}

	all, err := LoadProfileWith("cpu", Overrides{Set: []string{"seed_variants="}})
	if err != nil {
		t.Fatal(err)
	}
	plan, err = Build(all)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plan.Stage("train/nope@seed25"); !ok {
		t.Errorf("seed_variants= (empty): no train/nope@seed25; every variant should train at every seed")
	}

	bad, err := LoadProfileWith("cpu", Overrides{Set: []string{"seed_variants=rope,ropee"}})
	if err == nil {
		_, err = Build(bad)
	}
	if err == nil || !strings.Contains(err.Error(), "ropee") {
		t.Errorf("seed_variants with a misspelt variant: error %v, want one naming it", err)
	}
	one, err := LoadProfileWith("cpu", Overrides{Set: []string{"seeds=1"}})
	if err == nil {
		_, err = Build(one)
	}
	if err == nil || !strings.Contains(err.Error(), "two seeds") {
		t.Errorf("seed_variants with one seed: error %v, want one saying it needs two", err)
	}
}

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

// TestVariantSeeds: the cpu profile trains the runs claims v3x2 and v4m2
// read at seeds 31-35 (docs/statistics.md): nope at 31-35, the learned
// and content-dependent variants and PI and NTK at 31, and nothing else
// beyond seed_variants and the first seed. --set variant_seeds={} drops
// them (the control: the field, not the seeds, puts them there); a key
// that names no variant is an error naming it.
func TestVariantSeeds(t *testing.T) {
	plan := tinyCorpusPlan(t, "cpu")
	has := func(name string) bool { _, ok := plan.Stage(name); return ok }
	for _, want := range []string{"train/nope@seed31", "evaluate/nope@seed35", "train/learned-qk@seed31", "train/learned-proj-qkv@seed31",
		"evaluate/path@seed31", "train/random-qk@seed33", "evaluate/rope+yarn@seed34", "evaluate/rope+pi@seed31", "evaluate/rope+ntk@seed31"} {
		if !has(want) {
			t.Errorf("cpu plan has no %s", want)
		}
	}
	for _, not := range []string{"train/nope@seed22", "train/learned-qk@seed32", "train/path-fox@seed31", "train/kerple-log@seed31", "evaluate/rope+pi@seed32"} {
		if has(not) {
			t.Errorf("cpu plan has %s, which no registration reads", not)
		}
	}
	none, err := LoadProfileWith("cpu", Overrides{Set: []string{"variant_seeds={}"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(none.VariantSeeds) != 0 {
		t.Fatalf("--set variant_seeds={} left %v: the override must replace the map, not merge into it", none.VariantSeeds)
	}
	plan, err = Build(none)
	if err != nil {
		corpustest.Missing(t, err)
		return
	}
	if _, ok := plan.Stage("train/nope@seed31"); ok {
		t.Errorf("variant_seeds={}: train/nope@seed31 still planned")
	}
	for _, bad := range []string{`variant_seeds={"nopee":[31]}`, `variant_seeds={"rope+yarn":[31]}`, `variant_seeds={"rope+xpos":[31]}`} {
		p, err := LoadProfileWith("cpu", Overrides{Set: []string{bad}})
		if err == nil {
			_, err = Build(p)
		}
		if err == nil || !strings.Contains(err.Error(), "variant_seeds") {
			t.Errorf("--set %s: error %v, want one naming variant_seeds", bad, err)
		}
	}
}

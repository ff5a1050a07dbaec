package planner

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"routebench/pipeline"
	"routebench/stages/evaluate"
	"routebench/stages/report"
)

// TestRopeExtensionStages: the cpu profile evaluates rope+yarn at every
// seed rope is trained at and rope+pi, rope+ntk at the first seed and at
// seed 31 (variant_seeds: claim v3x2's descriptive ratios), each
// reading that seed's train/rope at 1, 16 and 128 T, primary protocol
// only; the report reads them as variants rope+yarn, rope+pi, rope+ntk.
func TestRopeExtensionStages(t *testing.T) {
	plan := tinyCorpusPlan(t, "cpu")
	byName := map[string]*pipeline.Stage{}
	for _, s := range plan.Stages {
		byName[s.Name] = s
	}
	want := []string{"evaluate/rope+yarn", "evaluate/rope+pi", "evaluate/rope+ntk", "evaluate/rope+pi@seed31", "evaluate/rope+ntk@seed31"}
	for _, s := range []int{22, 23, 24, 25, 31, 32, 33, 34, 35} {
		want = append(want, fmt.Sprintf("evaluate/rope+yarn@seed%d", s))
	}
	var got []string
	for _, s := range plan.Stages {
		if cfg, ok := s.Config.(evaluate.Config); ok && cfg.RopeScaling != "" {
			got = append(got, s.Name)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("extension stages %v, want %v", got, want)
	}
	for _, name := range want {
		s := byName[name]
		cfg := s.Config.(evaluate.Config)
		_, seed, _ := strings.Cut(name, "@")
		if seed != "" {
			seed = "@" + seed
		}
		rope := byName["evaluate/rope"+seed].Config.(evaluate.Config)
		if !slices.Equal(cfg.Multipliers, []int{1, 16, 128}) || cfg.Protocols != nil || cfg.Variant != "rope" ||
			cfg.Windows != rope.Windows || cfg.Seed != rope.Seed || cfg.Design != rope.Design {
			t.Errorf("%s: config %+v, want rope's windows at 1, 16, 128 T, no protocols", name, cfg)
		}
		var train string
		for _, in := range s.Inputs {
			if in.Name == evaluate.WeightsInput {
				train = in.Stage.Name
			}
		}
		if train != "train/rope"+seed {
			t.Errorf("%s reads %s, want train/rope%s", name, train, seed)
		}
	}
	rep := byName[report.Kind]
	rc := rep.Config.(report.Config)
	for _, v := range []string{"rope+yarn", "rope+pi", "rope+ntk"} {
		if !slices.Contains(rc.Variants, v) {
			t.Errorf("report variants %v lack %s", rc.Variants, v)
		}
	}
	inputs := map[string]bool{}
	for _, in := range rep.Inputs {
		inputs[in.Name] = true
	}
	for _, in := range []string{"evaluate-rope+yarn", "evaluate-rope+yarn@seed25", "evaluate-rope+pi", "evaluate-rope+ntk"} {
		if !inputs[in] {
			t.Errorf("the report has no input %s", in)
		}
	}
	p, _ := LoadProfile("cpu", "")
	p.RopeExtensions = []string{"yarn", "xpos"}
	if err := p.validate(); err == nil {
		t.Error("rope_extensions with xpos: want an error")
	}
}

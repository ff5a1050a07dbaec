package planner

import (
	"slices"
	"strings"
	"testing"

	"routebench/modelspec"
	"routebench/pipeline"
	"routebench/stages/evaluate"
	"routebench/stages/report"
)

// structKeys is every stage's key with each input's digest replaced by that
// input's own structural key: two stages with equal structural keys are the
// same computation on the same inputs all the way down, so they get the same
// key once the inputs are cached. Nothing runs.
func structKeys(t *testing.T, plan *pipeline.Plan) map[string]string {
	t.Helper()
	keys := map[string]string{}
	for _, s := range plan.Stages { // inputs first
		digests := map[string]string{}
		for _, in := range s.Inputs {
			digests[in.Name] = keys[in.Stage.Name]
		}
		k, err := pipeline.ComputeKey(s, digests)
		if err != nil {
			t.Fatal(err)
		}
		keys[s.Name] = k.ID.String()
	}
	return keys
}

func stageNames(plan *pipeline.Plan) []string {
	var n []string
	for _, s := range plan.Stages {
		n = append(n, s.Name)
	}
	return n
}

// seedProfile is the smoke profile on the tiny corpus, two variants.
func seedProfile(t *testing.T, seeds ...uint64) Profile {
	t.Helper()
	p, err := LoadProfileWith("smoke", Overrides{Corpus: []string{tinyCorpus(t)}, Set: []string{"variants=rope,alibi"}})
	if err != nil {
		t.Fatal(err)
	}
	p.Seeds = seeds
	return p
}

func buildOK(t *testing.T, p Profile) *pipeline.Plan {
	t.Helper()
	plan, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// seeds [1, 2, 3] (train.seed 1) trains each variant three times: seed 1
// under the plain names with the plain profile's keys, seeds 2 and 3
// suffixed, each with its seed in the training config and the profile's
// evaluation windows; the report reads all six. No seeds, or seeds [1],
// is the plain profile.
func TestSeedsExpansion(t *testing.T) {
	p := seedProfile(t)
	corpus := p.Corpus
	plain := buildOK(t, p)
	wantPlain := []string{"tokenize", "train/rope", "evaluate/rope", "train/alibi", "evaluate/alibi", "theory", "kernelspeed", "stepspeed", "report"}
	if got := stageNames(plain); !slices.Equal(got, wantPlain) {
		t.Fatalf("no seeds: stages %v, want %v", got, wantPlain)
	}
	one := seedProfile(t, 1)
	one.Corpus = corpus
	if !equalKeys(structKeys(t, plain), structKeys(t, buildOK(t, one))) {
		t.Fatal("seeds [1] (= train.seed) changed a key of the plain profile")
	}

	three := seedProfile(t, 1, 2, 3)
	three.Corpus = corpus
	plan := buildOK(t, three)
	want := []string{"tokenize", "train/rope", "evaluate/rope", "train/rope@seed2", "evaluate/rope@seed2", "train/rope@seed3", "evaluate/rope@seed3",
		"train/alibi", "evaluate/alibi", "train/alibi@seed2", "evaluate/alibi@seed2", "train/alibi@seed3", "evaluate/alibi@seed3", "theory", "kernelspeed", "stepspeed", "report"}
	if got := stageNames(plan); !slices.Equal(got, want) {
		t.Fatalf("seeds [1 2 3]: stages %v, want %v", got, want)
	}
	pk, sk := structKeys(t, plain), structKeys(t, plan)
	for _, name := range []string{"tokenize", "train/rope", "evaluate/rope", "train/alibi", "evaluate/alibi", "theory", "kernelspeed"} {
		if pk[name] != sk[name] {
			t.Errorf("%s: the default seed's stage has another key than in the plain profile", name)
		}
	}
	if sk["train/rope@seed2"] == sk["train/rope"] || sk["train/rope@seed2"] == sk["train/rope@seed3"] {
		t.Error("seeds share a training key")
	}
	var evalWindows []uint64
	for _, s := range plan.Stages {
		switch c := s.Config.(type) {
		case modelspec.Config:
			want := uint64(1)
			if _, suf, ok := strings.Cut(s.Name, "@seed"); ok {
				want = uint64(suf[0] - '0')
			}
			if c.Seed != want {
				t.Errorf("%s trains with seed %d, want %d", s.Name, c.Seed, want)
			}
		case report.Config:
			if !slices.Equal(c.Seeds, []uint64{1, 2, 3}) || c.DefaultSeed != 1 || len(s.Inputs) != 12+3 {
				t.Errorf("report: seeds %v default %d, %d inputs; want [1 2 3], 1, 12 runs' + theory + bench + stepspeed", c.Seeds, c.DefaultSeed, len(s.Inputs))
			}
		case evaluate.Config:
			evalWindows = append(evalWindows, c.Seed)
		}
	}
	if len(evalWindows) != 6 {
		t.Fatalf("%d evaluate stages, want 6", len(evalWindows))
	}
	for _, w := range evalWindows {
		if w != p.EvalSeed {
			t.Fatalf("evaluation windows differ between seeds: %v", evalWindows)
		}
	}
}

func equalKeys(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A seed named twice is refused, saying which.
func TestSeedsDuplicate(t *testing.T) {
	_, err := LoadProfileWith("smoke", Overrides{Set: []string{"seeds=1,2,1"}})
	if err == nil || !strings.Contains(err.Error(), "seed 1 twice") {
		t.Fatalf("duplicate seeds: %v", err)
	}
}

// Seeds and evaluation corpora: every seed's weights are evaluated on each
// corpus (evaluate/<v>@seed<N>@<corpus>), the default seed's under the
// corpus stage's plain name, and the report reads them all.
func TestSeedsWithEvalCorpus(t *testing.T) {
	p := seedProfile(t, 1, 2)
	p.EvalCorpora = []string{"other=" + tinyCorpus(t)}
	plan := buildOK(t, p)
	names := stageNames(plan)
	for _, want := range []string{"evaluate/rope@other", "evaluate/rope@seed2@other", "evaluate/alibi@seed2@other", "tokenize@other"} {
		if !slices.Contains(names, want) {
			t.Errorf("no stage %s in %v", want, names)
		}
	}
	rep, _ := plan.Stage("report")
	if len(rep.Inputs) != 4*3+3 { // 4 runs x (train, evaluate, evaluate@other) + theory + bench + stepspeed
		t.Errorf("report reads %d inputs, want 15", len(rep.Inputs))
	}
	for _, s := range plan.Stages {
		if c, ok := s.Config.(evaluate.Config); ok && strings.HasSuffix(s.Name, "@other") {
			want := "train/" + strings.TrimSuffix(strings.TrimPrefix(s.Name, "evaluate/"), "@other")
			if s.Inputs[1].Stage.Name != want || c.Corpus != "other" {
				t.Errorf("%s evaluates %s on corpus %q, want %s on other", s.Name, s.Inputs[1].Stage.Name, c.Corpus, want)
			}
		}
	}
}

package planner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"routebench/modelspec"
	"routebench/pipeline"
)

// saltFiles lists the source files in a stage's code salt (the "src" lines
// of pipeline.CodeSalt): editing exactly these re-keys the stage.
func saltFiles(t *testing.T, s *pipeline.Stage) map[string]bool {
	t.Helper()
	_, lines, err := pipeline.CodeSalt(s.Code)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, l := range lines {
		if f, ok := strings.CutPrefix(l, "src "); ok {
			files[strings.Fields(f)[0]] = true
		}
	}
	return files
}

// tinyCorpus is a two-file corpus directory: enough for Build to
// fingerprint (key tests run nothing on it).
func tinyCorpus(t *testing.T) string {
	t.Helper()
	corpus := t.TempDir()
	for name, text := range map[string]string{"a.txt": "some text to train on", "b.txt": "more text"} {
		if err := os.WriteFile(filepath.Join(corpus, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return corpus
}

// tinyCorpusPlan is a profile's plan over tinyCorpus (nothing runs).
func tinyCorpusPlan(t *testing.T, profile string) *pipeline.Plan {
	t.Helper()
	p, err := LoadProfile(profile, "")
	if err != nil {
		t.Fatal(err)
	}
	p.Corpus = []string{tinyCorpus(t)}
	plan, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// The boundaries the code salt draws, stage by stage: what an edit to a
// file re-keys. Each case names a file that exists (so a rename cannot make
// a case pass vacuously) and the stage kinds it must and must not re-key.
func TestCodeSaltBoundaries(t *testing.T) {
	plan := tinyCorpusPlan(t, "cpu")
	byKind := map[string][]*pipeline.Stage{}
	for _, s := range plan.Stages {
		byKind[s.Kind] = append(byKind[s.Kind], s)
	}
	for _, tc := range []struct {
		file        string
		rekeys, not []string
		why         string
	}{
		{"routebench/model/gomlxeval/forward.go", nil, []string{"tokenize", "train", "evaluate", "theory", "kernelspeed"},
			"the gomlx cross-check evaluators train nothing"},
		{"routebench/model/gomlxeval/forward_blockwise.go", nil, []string{"train", "evaluate"},
			"the XLA evaluator candidate is not the pipeline's evaluator"},
		{"routebench/modelspec/positions.go", []string{"train", "evaluate"}, []string{"tokenize", "theory"},
			"position math changes what models learn and how they are evaluated"},
		{"routebench/modelspec/variants.go", []string{"train", "evaluate"}, []string{"tokenize", "theory"},
			"the registry composes each variant"},
		{"routebench/model/graph.go", []string{"train"}, []string{"evaluate", "theory", "kernelspeed", "tokenize"},
			"the gomlx graph trains; evaluation is native"},
		{"routebench/model/nativeeval/attention.go", []string{"evaluate", "kernelspeed"}, []string{"train", "tokenize", "theory"},
			"the native evaluator does not train"},
		{"routebench/model/nativetrain/backward.go", []string{"train"}, []string{"evaluate", "kernelspeed", "tokenize", "theory"},
			"the native trainer evaluates nothing"},
		{"routebench/model/native/sgemm.go", []string{"train", "evaluate", "kernelspeed"}, []string{"tokenize", "theory"},
			"the kernels serve both the trainer and the evaluator"},
		{"routebench/stats/intervals.go", []string{"evaluate", "report"}, []string{"train", "tokenize"},
			"evaluation statistics cannot change a weight"},
		{"routebench/stages/report/claimsv2.go", []string{"report"}, []string{"train", "tokenize", "evaluate"},
			"a claim criterion re-judges, never re-evaluates"},
		{"routebench/stages/evaluate/protocol.go", []string{"evaluate", "report"}, []string{"train", "tokenize"},
			"an evaluation protocol cannot change a weight"},
		{"routebench/stages/tokenize/run.go", []string{"tokenize"}, []string{"train", "evaluate", "theory"},
			"the writer reaches train and evaluate only through the tokens, which the tokenize artifact's content key carries"},
		{"routebench/stages/tokenize/normalize.go", []string{"tokenize"}, []string{"train", "evaluate", "theory"},
			"corpus normalisation changes tokens, not how they are read"},
		{"routebench/stages/tokenize/shards/batches.go", []string{"tokenize", "train", "evaluate"}, []string{"theory"},
			"the reader draws every batch and window (and the writer writes its format)"},
		{"routebench/internal/seeds/seeds.go", []string{"tokenize", "train", "evaluate", "theory"}, nil,
			"one home derives every random stream: the corpus split, the weights, the batches, the windows and the theory's draws"},
		{"routebench/planner/evalcorpus.go", nil, []string{"tokenize", "train", "evaluate", "theory", "kernelspeed", "report"},
			"evaluation corpora reach keys through their stages' configs"},
		{"routebench/planner/profile.go", nil, []string{"tokenize", "train", "evaluate", "theory", "kernelspeed", "report"},
			"profile defaults reach keys through config values, not code"},
	} {
		for _, kind := range append(append([]string(nil), tc.rekeys...), tc.not...) {
			want := false
			for _, k := range tc.rekeys {
				want = want || k == kind
			}
			if len(byKind[kind]) == 0 {
				t.Fatalf("plan has no %s stage", kind)
			}
			for _, s := range byKind[kind] {
				files := saltFiles(t, s)
				if files[tc.file] != want {
					t.Errorf("%s: editing %s re-keys it: %v, want %v (%s)", s.Name, tc.file, files[tc.file], want, tc.why)
				}
			}
		}
		if _, err := os.Stat(filepath.Join("..", strings.TrimPrefix(tc.file, "routebench/"))); err != nil {
			t.Errorf("%s does not exist: update this case (%v)", tc.file, err)
		}
	}
	// Tests, docs and data re-key nothing.
	for _, s := range plan.Stages {
		for f := range saltFiles(t, s) {
			if strings.HasSuffix(f, "_test.go") || !strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, ".s") {
				t.Errorf("%s: %s is in the code salt; only non-test code belongs there", s.Name, f)
			}
		}
	}
}

// A train stage's key hashes only what its variant reads: --set
// sigma_min=0.1 re-keys the variants that draw their angle table from the
// sigmas (random-*) and no other (rope, alibi, nope, the zero-started
// learned variants, PaTH).
func TestTrainKeysHashOnlyWhatTheVariantReads(t *testing.T) {
	keys := func(set ...string) map[string]string {
		p, err := LoadProfileWith("cpu", Overrides{Set: set})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Build(p)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, s := range plan.Stages {
			if s.Kind != "train" {
				continue
			}
			digests := map[string]string{}
			for _, in := range s.Inputs {
				digests[in.Name] = "the same shards"
			}
			k, err := pipeline.ComputeKey(s, digests)
			if err != nil {
				t.Fatal(err)
			}
			out[s.Name] = k.Text
		}
		return out
	}
	base, moved := keys(), keys("sigma_min=0.1")
	drawn := 0
	for name, k := range base {
		variant, _, _ := strings.Cut(strings.TrimPrefix(name, "train/"), "@")
		v, err := modelspec.LookupVariant(variant)
		if err != nil {
			t.Fatal(err)
		}
		if v.DrawsRandomAngles() {
			drawn++
		}
		if changed := moved[name] != k; changed != v.DrawsRandomAngles() {
			t.Errorf("%s: --set sigma_min=0.1 re-keys it: %v, want %v (it reads the sigmas: %v)", name, changed, v.DrawsRandomAngles(), v.DrawsRandomAngles())
		}
	}
	if drawn == 0 || drawn == len(base) {
		t.Fatalf("%d of %d train stages draw random angles: the test needs both kinds", drawn, len(base))
	}
}

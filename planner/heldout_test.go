package planner

import (
	"testing"

	"routebench/internal/corpustest"
	"routebench/stages/tokenize"
)

// A user corpus's held-out minimum is the protocol's longest window at the
// profile's T (128 x T + 1), whatever the profile evaluates; the default
// corpus's named books carry no minimum, so its key stays as it was.
func TestTokenizeHeldOutMinimum(t *testing.T) {
	corpus := tinyCorpus(t)
	profiles := []string{"smoke", "cpu"}
	for _, name := range profiles {
		p, err := LoadProfile(name, "")
		if err != nil {
			t.Fatal(err)
		}
		p.LengthMultipliers = []int{1, 2}
		p.Corpus = []string{corpus}
		s, err := tokenizeStage(p)
		if err != nil {
			t.Fatal(err)
		}
		T := int64(p.Train.Context)
		if k := s.Config.(tokenize.Key); k.MinHeldOutTokens != 128*T+1 || k.MinTrainTokens != 8*(T+1) {
			t.Errorf("%s (T %d), user corpus: minimums %d/%d, want %d/%d", name, T, k.MinHeldOutTokens, k.MinTrainTokens, 128*T+1, 8*(T+1))
		}
	}
	for _, name := range profiles { // the default corpus: skips without it, fails under CI
		p, err := LoadProfile(name, "")
		if err != nil {
			t.Fatal(err)
		}
		p.LengthMultipliers = []int{1, 2}
		s, err := tokenizeStage(p)
		if err != nil {
			corpustest.Missing(t, err)
		}
		if k := s.Config.(tokenize.Key); k.MinHeldOutTokens != 0 || k.MinTrainTokens != 0 {
			t.Errorf("%s, default corpus: minimums %d/%d in the key", name, k.MinHeldOutTokens, k.MinTrainTokens)
		}
	}
}

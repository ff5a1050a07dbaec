package planner

import (
	"testing"

	"routebench/stages/tokenize"
)

// A user corpus's held-out minimum is the protocol's longest window at the
// profile's T (128 x T + 1), whatever the profile evaluates; the default
// corpus's named books carry no minimum, so its key stays as it was.
func TestTokenizeHeldOutMinimum(t *testing.T) {
	corpus := tinyCorpus(t)
	for _, name := range []string{"smoke", "cpu"} {
		p, err := LoadProfile(name, "")
		if err != nil {
			t.Fatal(err)
		}
		p.LengthMultipliers = []int{1, 2}
		if s, err := tokenizeStage(p); err != nil {
			t.Logf("default corpus not available (run `make corpus`), its half skipped: %v", err)
		} else if k := s.Config.(tokenize.Key); k.MinHeldOutTokens != 0 || k.MinTrainTokens != 0 {
			t.Errorf("%s, default corpus: minimums %d/%d in the key", name, k.MinHeldOutTokens, k.MinTrainTokens)
		}
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
}

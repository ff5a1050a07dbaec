package nativeeval

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"routebench/modelspec/weights/weightstest"
)

// TestPrefixDiagnosticsMatchPrefixWindows: the diagnostics summarised over
// a prefix's queries (Options.Prefixes) equal those of a forward pass over
// the prefix window itself, for a rotation, a bias and a PaTH variant; a
// summary over one query too many (a prefix off by one position) does not.
func TestPrefixDiagnosticsMatchPrefixWindows(t *testing.T) {
	const L = 150
	prefixes := []int{40, 75, 149}
	dists := []int{8, 32}
	for _, v := range []string{"rope", "random-qk", "alibi", "path"} {
		t.Run(v, func(t *testing.T) {
			a := variantArch(v)
			m, err := Load(weightstest.RandomSet(t, a, 41))
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(3, 4))
			toks := make([]int32, L)
			for i := range toks {
				toks[i] = int32(r.IntN(a.Vocab))
			}
			path := a.Householder
			full, err := m.LogProbs(context.Background(), toks, nil, Options{FarDistances: dists, Prefixes: prefixes, PathSteps: path, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if len(full.PrefixHeads) != len(prefixes) {
				t.Fatalf("%d prefix summaries, want %d", len(full.PrefixHeads), len(prefixes))
			}
			for k, P := range prefixes {
				own, err := m.LogProbs(context.Background(), toks[:P], nil, Options{FarDistances: dists, PathSteps: path, Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				if e := headStatsDiff(full.PrefixHeads[k], own.Heads); e > 1e-5 {
					t.Errorf("prefix %d: diagnostics differ from the prefix window's own by %.3g", P, e)
				}
				if path {
					if len(full.PrefixPathSteps[k]) != len(own.PathSteps) {
						t.Fatalf("prefix %d: %d step sums, want %d", P, len(full.PrefixPathSteps[k]), len(own.PathSteps))
					}
					for i, s := range full.PrefixPathSteps[k] {
						o := own.PathSteps[i]
						if s.Count != o.Count {
							t.Fatalf("prefix %d: step sum counts %d positions, want %d", P, s.Count, o.Count)
						}
						for j := range s.Sum {
							if math.Abs(s.Sum[j]-o.Sum[j]) > 1e-4*(1+math.Abs(o.Sum[j])) {
								t.Fatalf("prefix %d: step sum %d entry %d is %g, the prefix window's %g", P, i, j, s.Sum[j], o.Sum[j])
							}
						}
					}
				}
				// Mutation: the window's summary one query longer is not the prefix's.
				longer, err := m.LogProbs(context.Background(), toks[:P+1], nil, Options{FarDistances: dists, Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				if e := headStatsDiff(full.PrefixHeads[k], longer.Heads); e <= 1e-5 {
					t.Errorf("prefix %d: the summary also matches a window one position longer (%.3g): the comparison cannot fail", P, e)
				}
			}
		})
	}
}

// headStatsDiff is the largest difference between two sets of head
// statistics (means and query counts; a count mismatch is +Inf).
func headStatsDiff(a, b []HeadStats) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var e float64
	for i := range a {
		if a[i].Entropy.N != b[i].Entropy.N {
			return math.Inf(1)
		}
		e = math.Max(e, math.Abs(a[i].Entropy.Mean-b[i].Entropy.Mean))
		for k := range a[i].Far {
			if a[i].Far[k].N != b[i].Far[k].N {
				return math.Inf(1)
			}
			e = math.Max(e, math.Abs(a[i].Far[k].Mean-b[i].Far[k].Mean))
		}
	}
	return e
}

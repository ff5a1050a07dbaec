package report

import (
	"strings"
	"testing"

	"routebench/stages/evaluate"
	"routebench/stats"
)

// family is path with ratio r at 128T beside random-qk (1.5) and
// random-qkv (1.2), plus the extra variants' ratios at 128T.
func family(r float64, extra map[string]float64) map[string]*evaluate.Result {
	ev := map[string]*evaluate.Result{
		"path":       madeResult("path", at(iv(1, 1, 1), iv(r, r-0.1, r+0.1)), nil),
		"random-qk":  madeResult("random-qk", at(iv(1, 1, 1), iv(1.5, 1.4, 1.6)), nil),
		"random-qkv": madeResult("random-qkv", at(iv(1, 1, 1), iv(1.2, 1.1, 1.3)), nil),
	}
	for v, x := range extra {
		ev[v] = madeResult(v, at(iv(1, 1, 1), iv(x, x-0.1, x+0.1)), nil)
	}
	return ev
}

// gated is a path-fox result with the given ratio at 128T and PPL at T,
// beside a path one with PPL 10 at T.
func gated(ratio stats.Interval, ppl float64) map[string]*evaluate.Result {
	return map[string]*evaluate.Result{
		"path-fox": withPPLAtT(madeResult("path-fox", at(iv(1, 1, 1), ratio), nil), ppl),
		"path":     withPPLAtT(madeResult("path", at(iv(1.2, 1.1, 1.3), iv(1.5, 1.4, 1.6)), nil), 10),
	}
}

// Both PaTH claims on both sides of their criteria and at the edges, and
// NOT TESTED when a variant they need is missing.
func TestPathClaimVerdicts(t *testing.T) {
	const alike, gate = "extrapolates like the SO(2)", "forgetting gate"
	for _, tc := range []struct {
		name, claim, want, evidence string
		ev                          map[string]*evaluate.Result
	}{
		// The family spans [1.2, 1.5]; widened [1.1, 1.6], edges included.
		{"inside the range", alike, "REPRODUCED", "inside", family(1.3, nil)},
		{"at the widened lower edge", alike, "REPRODUCED", "inside", family(1.1, nil)},
		{"at the widened upper edge", alike, "REPRODUCED", "inside", family(1.6, nil)},
		{"below: better", alike, "NOT REPRODUCED", "below", family(1.09, nil)},
		{"above: worse", alike, "NOT REPRODUCED", "above", family(1.61, nil)},
		// learned-qk at 2.0 widens the range to [1.1, 2.1]; a learned
		// variant below extends it down.
		{"a learned variant widens the range", alike, "REPRODUCED", "learned-qk 2.000", family(1.9, map[string]float64{"learned-qk": 2.0})},
		{"the same ratio without it", alike, "NOT REPRODUCED", "above", family(1.9, nil)},
		{"learned-qkv below", alike, "REPRODUCED", "learned-qkv 0.950", family(0.9, map[string]float64{"learned-qkv": 0.95})},
		{"path missing", alike, "NOT TESTED", "path", map[string]*evaluate.Result{
			"random-qk": madeResult("random-qk", at(iv(1, 1, 1), iv(1, 1, 1)), nil), "random-qkv": madeResult("random-qkv", at(iv(1, 1, 1), iv(1, 1, 1)), nil)}},
		{"random-qkv missing", alike, "NOT TESTED", "random-qkv", func() map[string]*evaluate.Result {
			ev := family(1.3, map[string]float64{"learned-qk": 1.3, "learned-qkv": 1.3})
			delete(ev, "random-qkv")
			return ev
		}()},
		// path-fox within 1 +- 0.10 at 128T and PPL at T at most 3% above path's.
		{"gated flat at PaTH's PPL", gate, "REPRODUCED", "path-fox", gated(iv(1.02, 0.95, 1.09), 10.1)},
		{"gated better than PaTH at T", gate, "REPRODUCED", "-10.0%", gated(iv(0.97, 0.9, 1.05), 9)},
		{"gated ratio at the upper edge", gate, "REPRODUCED", "", gated(iv(1.10, 1.0, 1.2), 10)},
		{"gated ratio at the lower edge", gate, "REPRODUCED", "", gated(iv(0.90, 0.8, 1.0), 10)},
		{"gated ratio above", gate, "NOT REPRODUCED", "", gated(iv(1.11, 1.0, 1.2), 10)},
		{"gated ratio below", gate, "NOT REPRODUCED", "", gated(iv(0.89, 0.8, 1.0), 10)},
		{"gated PPL at the edge", gate, "REPRODUCED", "+3.0%", gated(iv(1, 0.95, 1.05), 10.3)},
		{"gated PPL too high", gate, "NOT REPRODUCED", "", gated(iv(1, 0.95, 1.05), 10.31)},
		{"path-fox missing", gate, "NOT TESTED", "path-fox", map[string]*evaluate.Result{"path": withPPLAtT(madeResult("path", at(iv(1, 1, 1), iv(1, 1, 1)), nil), 10)}},
		{"path missing beside path-fox", gate, "NOT TESTED", "path", map[string]*evaluate.Result{"path-fox": withPPLAtT(madeResult("path-fox", at(iv(1, 1, 1), iv(1, 1, 1)), nil), 10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := verdictOf(t, tc.ev, tc.claim)
			if c.Verdict != tc.want || !strings.Contains(c.Evidence, tc.evidence) {
				t.Fatalf("verdict %s (evidence %q), want %s with %q (criterion: %s)", c.Verdict, c.Evidence, tc.want, tc.evidence, c.Criterion)
			}
		})
	}
}

// The claim ids are the CI baseline's keys: PaTH's two are among them,
// once each, NOT TESTED on a profile without PaTH.
func TestPathClaimIDs(t *testing.T) {
	seen := map[string]string{}
	for _, c := range Claims(map[string]*evaluate.Result{}) {
		if _, dup := seen[c.ID]; dup {
			t.Fatalf("claim id %s twice", c.ID)
		}
		seen[c.ID] = c.Verdict
	}
	for _, id := range []string{"path-like-so2", "path-far-mass-control"} {
		if seen[id] != "NOT TESTED" {
			t.Fatalf("claim %s: %q on no results, want NOT TESTED (claims %v)", id, seen[id], seen)
		}
	}
}

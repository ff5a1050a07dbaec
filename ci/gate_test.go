package ci

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"routebench/stages/evaluate"
	"routebench/stats"
)

func result(ratios ...float64) *evaluate.Result {
	r := &evaluate.Result{}
	for i, x := range ratios {
		L := 32 << i
		r.Lengths = append(r.Lengths, evaluate.LengthResult{L: L, Multiplier: 1 << i,
			PPL: stats.Interval{Value: 5 * x}, Ratio: stats.Interval{Value: x}})
	}
	return r
}

func TestGatePassesOnIdenticalAndFailsOnChange(t *testing.T) {
	base := Collect("smoke", map[string]*evaluate.Result{"rope": result(1, 1.3, 1.9), "alibi": result(1, 0.99, 0.98)},
		map[string]string{"far_mass": "PASS"})
	path := filepath.Join(t.TempDir(), "baseline.json")
	if err := base.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	same := Collect("smoke", map[string]*evaluate.Result{"rope": result(1, 1.3, 1.9), "alibi": result(1, 0.99, 0.98)},
		map[string]string{"far_mass": "PASS"})
	if d := Compare(loaded, same); len(d) != 0 {
		t.Fatalf("identical results fail the gate: %v", d)
	}
	// Within tolerance: passes.
	near := Collect("smoke", map[string]*evaluate.Result{"rope": result(1, 1.3*(1+RelTolerance/2), 1.9), "alibi": result(1, 0.99, 0.98)},
		map[string]string{"far_mass": "PASS"})
	if d := Compare(loaded, near); len(d) != 0 {
		t.Fatalf("a change within tolerance fails the gate: %v", d)
	}
	// A deliberate change to one variant (ALiBi no longer flat) and a theory verdict flip.
	changed := Collect("smoke", map[string]*evaluate.Result{"rope": result(1, 1.3, 1.9), "alibi": result(1, 1.2, 1.5)},
		map[string]string{"far_mass": "FAIL"})
	d := Compare(loaded, changed)
	joined := strings.Join(d, "\n")
	for _, want := range []string{"ratio alibi L=64: baseline 0.99, current 1.2 (+21.212%", "ratio alibi L=128", "theory far_mass: baseline PASS, current FAIL"} {
		if !strings.Contains(joined, want) {
			t.Errorf("diff lacks %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "rope") {
		t.Errorf("unchanged variant reported:\n%s", joined)
	}
	// A missing variant is a difference too.
	missing := Collect("smoke", map[string]*evaluate.Result{"rope": result(1, 1.3, 1.9)}, map[string]string{"far_mass": "PASS"})
	if d := Compare(loaded, missing); len(d) == 0 || !strings.Contains(strings.Join(d, "\n"), "alibi L=32: missing") {
		t.Fatalf("missing variant not reported: %v", d)
	}
}

func TestCompareWithinAndLargestDifference(t *testing.T) {
	base := Collect("smoke", map[string]*evaluate.Result{"rope": result(1, 1.3, 1.9), "alibi": result(1, 0.99, 0.98)}, nil)
	// Another backend: every value off by up to 0.4%.
	cur := Collect("smoke", map[string]*evaluate.Result{"rope": result(1, 1.3*1.002, 1.9*0.996), "alibi": result(1, 0.99, 0.98*1.001)}, nil)
	if d := Compare(base, cur); len(d) != 6 {
		t.Fatalf("at the default tolerance every changed value (3 ratios, 3 PPLs) differs, got %d: %v", len(d), d)
	}
	if d := CompareWithin(base, cur, 0.005); len(d) != 0 {
		t.Fatalf("within 0.5%% the runs agree, got %v", d)
	}
	if d := CompareWithin(base, cur, 0.003); len(d) != 2 {
		t.Fatalf("at 0.3%% only the 0.4%% values differ (rope L=128 ratio and PPL), got %v", d)
	}
	got := LargestDifference(base, cur)
	if got.Variant != "rope" || got.Length != "128" || math.Abs(got.Rel-0.004) > 1e-12 {
		t.Fatalf("largest difference %+v, want rope L=128 at 0.004", got)
	}
	if s := got.String(); !strings.Contains(s, "rope L=128") || !strings.HasPrefix(s, "0.004 ") {
		t.Errorf("String() = %q", s)
	}
	if none := LargestDifference(base, &Baseline{}); none.What != "" || none.String() != "no value in common" {
		t.Errorf("no common values: %+v %q", none, none.String())
	}
}

// A claim verdict that flips is a difference even when every number is
// within tolerance: the gate compares what RESULTS.md concludes, too.
func TestGateComparesClaimVerdicts(t *testing.T) {
	flat := map[string]*evaluate.Result{"alibi": result(1, 0.99, 1.05)}
	base := Collect("smoke", flat, nil)
	if got := base.Claims["alibi-flat"]; got != "REPRODUCED" {
		t.Fatalf("claims collected %v, want alibi-flat REPRODUCED", base.Claims)
	}
	if got := base.Claims["accumulated-beats-rope"]; got != "NOT TESTED" {
		t.Fatalf("a claim without its variants: %q, want NOT TESTED", got)
	}
	cur := Collect("smoke", flat, nil)
	cur.Claims["alibi-flat"] = "NOT REPRODUCED" // as if the criterion had changed
	d := CompareWithin(base, cur, 0.5)
	if len(d) != 1 || !strings.Contains(d[0], "claim alibi-flat: baseline REPRODUCED, current NOT REPRODUCED") {
		t.Fatalf("flipped claim verdict: %v", d)
	}
	old := Collect("smoke", flat, nil)
	old.Claims = nil // a baseline from before claims were gated
	if d := Compare(old, base); len(d) != len(base.Claims) || len(d) < 6 || !strings.Contains(strings.Join(d, "\n"), "claim alibi-flat: baseline (missing), current REPRODUCED") {
		t.Fatalf("a baseline without claims must differ on every claim, got %v", d)
	}
}

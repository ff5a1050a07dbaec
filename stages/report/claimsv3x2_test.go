package report

import (
	"strings"
	"testing"

	"routebench/stages/evaluate"
	"routebench/stats/decide"
)

// x2Seeds: random-qk's log prefix ratio is 0.1 at 16T and 0.2 at 128T;
// rope+yarn's is 0.0 and 0.1 on its own pass, but its first T positions
// (scored at scale s) are worse than plain rope's by handicap nats, and so
// is its whole window (the same scale).
func x2Seeds(handicap float64) []map[string]*evaluate.Result {
	per := v3Seeds(5, 8, 0.05, 0.02, map[string]map[int]float64{
		"random-qk": {16: 0.1, 128: 0.2},
		"rope+yarn": {16: 0.0, 128: 0.1},
		"rope":      {16: 0.5, 128: 1.0},
	})
	for _, ev := range per {
		for k, l := range ev["rope+yarn"].Lengths {
			if l.Multiplier == 1 {
				continue
			}
			for w := range l.PrefixLoss {
				l.PrefixLoss[w] += handicap
				l.WindowLoss[w] += handicap
			}
			ev["rope+yarn"].Lengths[k] = l
		}
	}
	return per
}

func claimByID(t *testing.T, cs []Claim, dec []V3, id string) (Claim, V3) {
	t.Helper()
	for k, c := range cs {
		if c.ID == id {
			return c, dec[k]
		}
	}
	t.Fatalf("no claim %s", id)
	return Claim{}, V3{}
}

// With a handicapped YaRN first T, v3x (the same pass's first T) says
// random-qk loses and v3x2 (each model's unscaled first T) that it wins;
// without the handicap v3x2 fails too (the control: the unscaled base is
// what turns the verdict). On the registered seeds 31-35 v3x2 is
// confirmatory and v3x exploratory, and v3x carries its invalid mark and
// the unscaled figures beside it.
func TestClaimsV3X2(t *testing.T) {
	fresh := []uint64{31, 32, 33, 34, 35}
	cs, dec := ClaimsV3(x2Seeds(0.3), fresh)
	x, xd := claimByID(t, cs, dec, "accumulated-beats-extended-rope"+V3XSuffix)
	x2, x2d := claimByID(t, cs, dec, "accumulated-beats-extended-rope"+V3X2Suffix)
	if x.Verdict != "NOT REPRODUCED (exploratory)" {
		t.Errorf("v3x on a handicapped YaRN: %s (%s), want NOT REPRODUCED (exploratory)", x.Verdict, x.Evidence)
	}
	if x2.Verdict != "REPRODUCED" || x2d.PHolm != x2d.P {
		t.Errorf("v3x2 on the unscaled bases: %s, p %v Holm %v (%s); want REPRODUCED, confirmatory on seeds 31-35, its own family", x2.Verdict, x2d.P, x2d.PHolm, x2.Evidence)
	}
	if e := x2.Effect; e == nil || e.Value > 0.85 || e.Value < 0.7 {
		t.Errorf("v3x2 effect %v, want about exp(0.2 - 0.4) = 0.82 at 128T", e)
	}
	if !strings.Contains(x2.Evidence, "at 16T") || !strings.Contains(x2.Evidence, "at 128T") {
		t.Errorf("v3x2 evidence %q: want both 16T and 128T", x2.Evidence)
	}
	if xd.Invalid == "" || !strings.Contains(xd.Beside, "exploratory") || !strings.Contains(xd.Beside, "random-qk / rope+yarn") {
		t.Errorf("v3x: invalid %q, beside %q; want the reason and the exploratory unscaled figures", xd.Invalid, xd.Beside)
	}
	var b strings.Builder
	renderV3(&b, seedGroups{v3: cs, v3dec: dec}, fresh)
	md := b.String()
	if !strings.Contains(md, "Criterion found invalid after its run") || !strings.Contains(md, "(v3x2)") {
		t.Errorf("RESULTS.md's v3 table does not mark v3x invalid or lacks v3x2:\n%s", md)
	}

	cs, dec = ClaimsV3(x2Seeds(0), fresh)
	if c, _ := claimByID(t, cs, dec, "accumulated-beats-extended-rope"+V3X2Suffix); c.Verdict != "NOT REPRODUCED" {
		t.Errorf("control: no handicap, random-qk worse than YaRN: v3x2 %s (%s), want NOT REPRODUCED", c.Verdict, c.Evidence)
	}
	cs, dec = ClaimsV3(x2Seeds(0.3), []uint64{21, 22, 23, 24, 25})
	if c, _ := claimByID(t, cs, dec, "accumulated-beats-extended-rope"+V3X2Suffix); c.Verdict != "REPRODUCED (exploratory)" {
		t.Errorf("v3x2 read on seeds 21-25 (looked at): %s, want REPRODUCED (exploratory)", c.Verdict)
	}
}

// The registrations file parses; a family is confirmatory only on its own
// seeds; selectSeeds keeps a family's registered seeds when the run has
// them; a file that lists a suffix twice or no seeds is refused.
func TestRegistrations(t *testing.T) {
	if _, err := loadRegistry(); err != nil {
		t.Fatal(err)
	}
	v3, x2 := registrationOf(V3Suffix), registrationOf(V3X2Suffix)
	if !v3.ConfirmatoryOn([]uint64{21, 25}) || v3.ConfirmatoryOn([]uint64{21, 31}) || v3.ConfirmatoryOn(nil) || x2.ConfirmatoryOn([]uint64{21}) || !x2.ConfirmatoryOn([]uint64{31, 32, 33, 34, 35}) {
		t.Error("ConfirmatoryOn: v3 is confirmatory on 21-25 only, v3x2 on 31-35 only")
	}
	if registrationOf("-unregistered").ConfirmatoryOn([]uint64{21}) {
		t.Error("a family the file does not list is confirmatory on some seed")
	}
	per := make([]map[string]*evaluate.Result, 4)
	_, ss := x2.selectSeeds(per, []uint64{21, 31, 22, 32})
	if len(ss) != 2 || ss[0] != 31 || ss[1] != 32 {
		t.Errorf("v3x2 on seeds 21, 31, 22, 32 reads %v, want [31 32]", ss)
	}
	if _, ss := x2.selectSeeds(per, []uint64{1, 2, 3, 4}); len(ss) != 4 {
		t.Errorf("v3x2 on seeds 1-4 (none registered) reads %v, want all four", ss)
	}
	for _, bad := range []string{`{"families": [{"family": "a", "suffix": "-a", "confirmatory_seeds": [1]}, {"family": "b", "suffix": "-a", "confirmatory_seeds": [2]}]}`,
		`{"families": [{"family": "a", "suffix": "-a"}]}`, `{"families": [`} {
		if _, err := parseRegistry([]byte(bad)); err == nil {
			t.Errorf("parseRegistry accepted %s", bad)
		}
	}
}

// The power note's Monte Carlo error is computed from the rows' powers:
// 0.5 at 1,000 simulations is 1.6 points, 0.99 is 0.3.
func TestPowerErrorText(t *testing.T) {
	if s := powerErrorText([]V3{{Power: 0.99}, {Power: 0.5}}); !strings.Contains(s, "at most 1.6 points") {
		t.Errorf("%s: want 1.6 points (power 0.5)", s)
	}
	if s := powerErrorText([]V3{{Power: 0.99}}); !strings.Contains(s, "at most 0.3 points") {
		t.Errorf("%s: want 0.3 points", s)
	}
}

// A part whose values have no spread reads "not testable (no spread)" and
// its claim NOT TESTED, not p 0 or 1 with a zero-width interval; the same
// mean with a spread is judged (the control).
func TestNoSpreadNotTestable(t *testing.T) {
	flat := [][]float64{{0.2}, {0.2}, {0.2}, {0.2}, {0.2}}
	spread := [][]float64{{0.21}, {0.19}, {0.2}, {0.22}, {0.18}}
	judge := func(y [][]float64) Claim {
		spec := v3Spec{"x", "x", "x", func() ([]v3Part, error) {
			return []v3Part{newPart("log ratio", y, 0.5, decide.Below, false)}, nil
		}}
		cs, _ := judgeFamily([]v3Spec{spec}, nil, Registration{Suffix: "-t"})
		return cs[0]
	}
	if c := judge(flat); c.Verdict != "NOT TESTED" || !strings.Contains(c.Evidence, "not testable (no spread") {
		t.Errorf("no spread: %s (%s), want NOT TESTED, not testable (no spread)", c.Verdict, c.Evidence)
	}
	if c := judge(spread); c.Verdict != "REPRODUCED" {
		t.Errorf("control with a spread: %s (%s), want REPRODUCED", c.Verdict, c.Evidence)
	}
}

package report

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"routebench/stages/evaluate"
)

// v4m2World describes synthetic runs for the v4m2 claims: far-mass growth
// slopes (far(L) = base + slope L), qk's and qkv's far coherence,
// unweighted and mass-weighted, and the M3' units of every learned model.
type v4m2World struct {
	qkSlope, nopeSlope, alibiSlope float64
	qkCoh, qkvCoh                  float64 // unweighted
	qkWCoh, qkvWCoh                float64 // mass-weighted
	units                          int     // per M3' model
	agree, repeatedAgree           int     // units whose n* agrees, on held-out text and on the repeated byte
}

func (w v4m2World) runs() []map[string]*evaluate.Result {
	r := rand.New(rand.NewPCG(52, 2))
	run := func(v string, slope, coh, wcoh float64) *evaluate.Result {
		res := mechRun(r, v, func(L int) float64 { return 0.05 + slope*float64(L) }, func(int) float64 { return coh })
		for k := range res.Mechanism.Lengths {
			ml := &res.Mechanism.Lengths[k]
			for range ml.FarCoherence {
				ml.FarCoherenceWeighted = append(ml.FarCoherenceWeighted, wcoh+0.01*r.NormFloat64())
			}
		}
		return res
	}
	var per []map[string]*evaluate.Result
	for range 5 {
		m := map[string]*evaluate.Result{
			"random-qk":  run("random-qk", w.qkSlope, w.qkCoh, w.qkWCoh),
			"random-qkv": run("random-qkv", w.qkSlope, w.qkvCoh, w.qkvWCoh),
			"alibi":      run("alibi", w.alibiSlope, 0.9, 0.9),
			"nope":       run("nope", w.nopeSlope, 0.5, 0.5),
		}
		for _, v := range m3Variants {
			res := run(v, 0.001, 0.5, 0.5)
			mx := &evaluate.RouteMixing{Kind: "so2", Repeated: &evaluate.RepeatedText{Token: 32, Tokens: 129}}
			for u := range w.units {
				h := evaluate.RouteWindow{Layer: 0, Head: u / 8, Pair: u % 8, Predicted: 100, Window: 400}
				if u < w.agree {
					h.Window = 60 + 10*(u%10) // 60..150: within a factor 2 of 100
				}
				if u < w.repeatedAgree {
					h.Repeated = 100
				}
				mx.Heads = append(mx.Heads, h)
			}
			res.Mixing = mx
			m[v] = res
		}
		per = append(per, m)
	}
	return per
}

// passing is a world that satisfies every v4m2 claim and fails every
// control.
func passing() v4m2World {
	return v4m2World{qkSlope: 0.01, nopeSlope: 0.01, alibiSlope: 0.0002, qkCoh: 0.8, qkvCoh: 0.3, qkWCoh: 0.8, qkvWCoh: 0.3, units: 16, agree: 14}
}

var v4m2Seeds = []uint64{31, 32, 33, 34, 35}

func judgeV4M2(t *testing.T, w v4m2World) ([]Claim, []V3) {
	t.Helper()
	claims, dec := ClaimsV4M2(w.runs(), v4m2Seeds)
	if len(claims) != 3 {
		t.Fatalf("%d claims, want 3", len(claims))
	}
	return claims, dec
}

// TestClaimsV4M2 judges M1', M2' and M3' on a world built to satisfy them,
// then breaks each in turn: each counted criterion and each control has a
// case that fails the claim.
func TestClaimsV4M2(t *testing.T) {
	claims, dec := judgeV4M2(t, passing())
	for k, c := range claims {
		if c.Verdict != "REPRODUCED" || dec[k].Holm != "REPRODUCED" {
			t.Fatalf("%s: %s / Holm %s on the passing world: %s", c.ID, c.Verdict, dec[k].Holm, c.Evidence)
		}
		if c.Version != "v4m2" || !strings.HasSuffix(c.ID, V4M2Suffix) {
			t.Errorf("claim %s version %s", c.ID, c.Version)
		}
	}
	if !strings.Contains(claims[0].Evidence, "control alibi fails the criterion, as it must") {
		t.Errorf("M1' does not report its control: %s", claims[0].Evidence)
	}
	if !strings.Contains(claims[2].Evidence, "control repeated byte fails the criterion, as it must") || !strings.Contains(claims[2].Evidence, "14 of 16 units agree") {
		t.Errorf("M3' evidence: %s", claims[2].Evidence)
	}
	if !strings.Contains(dec[1].Beside, "unweighted coherence qkv - qk") {
		t.Errorf("M2' does not show the unweighted coherence beside it: %q", dec[1].Beside)
	}

	cases := []struct {
		name  string
		claim int
		edit  func(*v4m2World)
		want  string // in the evidence
	}{
		// M1': NoPE grows 4x as much as rotation; v4m's edge (0.10) would
		// still pass rotation's growth of 0.56.
		{"nope's growth over twice rotation's", 0, func(w *v4m2World) { w.nopeSlope = 0.04 }, "random-qk - nope/2"},
		// M1''s control: ALiBi grows as rotation does.
		{"alibi grows as rotation", 0, func(w *v4m2World) { w.alibiSlope = 0.01 }, "control alibi passes the criterion"},
		// M2': the mass-weighted coherence is the same, though the unweighted
		// one differs (rows with little far mass carry the difference).
		{"weighted coherence equal", 1, func(w *v4m2World) { w.qkvWCoh = 0.8 }, "mass-weighted coherence qkv - qk"},
		// M3': 4 of 16 units agree.
		{"few units agree", 2, func(w *v4m2World) { w.agree = 4 }, "4 of 16 units agree"},
		// M3''s control: the repeated byte agrees as well as the text.
		{"repeated byte agrees", 2, func(w *v4m2World) { w.repeatedAgree = 16 }, "control repeated byte passes the criterion"},
	}
	for _, c := range cases {
		w := passing()
		c.edit(&w)
		claims, _ := judgeV4M2(t, w)
		got := claims[c.claim]
		if got.Verdict != "NOT REPRODUCED" || !strings.Contains(got.Evidence, c.want) {
			t.Errorf("%s: %s %s, want NOT REPRODUCED with %q: %s", c.name, got.ID, got.Verdict, c.want, got.Evidence)
		}
		for k, o := range claims {
			if k != c.claim && o.Verdict != "REPRODUCED" {
				t.Errorf("%s: %s turned %s too", c.name, o.ID, o.Verdict)
			}
		}
	}

	// Too few units: not tested, never a pass.
	w := passing()
	w.units, w.agree = 6, 6
	if claims, dec := judgeV4M2(t, w); claims[2].Verdict != "NOT TESTED" || dec[2].Holm != "NOT TESTED" || !strings.Contains(claims[2].Evidence, "fewer than 8 units") {
		t.Errorf("M3' with 6 units: %s / %s: %s", claims[2].Verdict, dec[2].Holm, claims[2].Evidence)
	}
	// On other seeds than the registered ones: exploratory.
	if claims, _ := ClaimsV4M2(passing().runs(), []uint64{21, 22, 23, 24, 25}); !strings.HasSuffix(claims[0].Verdict, "(exploratory)") {
		t.Errorf("v4m2 on seeds 21-25 reads %s, want exploratory", claims[0].Verdict)
	}
}

// TestWindowUnits: a unit agrees within a factor 2 either way and not
// beyond; a window not found never agrees; a unit without a prediction is
// not counted; a shared token table counts its first layer only.
func TestWindowUnits(t *testing.T) {
	for _, c := range []struct {
		m, p int
		want bool
	}{{200, 100, true}, {50, 100, true}, {201, 100, false}, {49, 100, false}, {0, 100, false}} {
		if got := agrees(c.m, c.p); got != c.want {
			t.Errorf("agrees(%d, %d) = %v, want %v", c.m, c.p, got, c.want)
		}
	}
	mx := &evaluate.RouteMixing{SharedTable: true, Repeated: &evaluate.RepeatedText{}, Heads: []evaluate.RouteWindow{
		{Layer: 0, Window: 100, Predicted: 100, Repeated: 100}, {Layer: 0, Window: 100, Predicted: 0},
		{Layer: 1, Window: 100, Predicted: 100, Repeated: 100}, {Layer: 0, Window: 0, Predicted: 90}}}
	c, err := windowUnits(&evaluate.Result{Variant: "learned-qk", Mixing: mx})
	if err != nil || c.units != 2 || c.agree != 1 || c.control != 1 {
		t.Errorf("shared table: %+v (%v), want 2 units (layer 0 with a prediction), 1 agreeing, 1 on the control", c, err)
	}
	mx.SharedTable = false
	if c, _ := windowUnits(&evaluate.Result{Variant: "learned-proj-qkv", Mixing: mx}); c.units != 3 {
		t.Errorf("own layers: %d units, want 3", c.units)
	}
	mx.Repeated = nil
	if _, err := windowUnits(&evaluate.Result{Variant: "path", Mixing: mx}); err == nil || !strings.Contains(err.Error(), "repeated-byte control") {
		t.Errorf("a run without the control: %v", err)
	}
	if p := binomialPart("x", 14, 16); math.Abs(p.p-137.0/65536) > 1e-15 {
		t.Errorf("14 of 16: p %v, want 137/65536", p.p)
	}
}

package theory

import (
	"context"
	"testing"
)

// Each control must fail its named criterion. These tests fail if a control
// passes, and show that a check whose control passes is itself a FAIL.

func requireControls(t *testing.T, cs []Control, want int) {
	t.Helper()
	if len(cs) != want {
		t.Fatalf("%d controls, want %d: %+v", len(cs), want, cs)
	}
	for _, c := range cs {
		if !c.Failed || !c.AsItMust {
			t.Errorf("control %q passed %q: %s", c.Name, c.Criterion, c.Detail)
		} else {
			t.Logf("control %q fails %q as it must: %s", c.Name, c.Criterion, c.Detail)
		}
	}
}

func TestMixingControlsFail(t *testing.T) {
	cfg := smallMixing(StepFamily{Name: "so2", Kind: "so2", Dim: 16, Angle: "gaussian", Scale: 0.6})
	cfg.Mixing.Queries = 2048 // controls get a quarter: enough that the 0-or-pi law's zero mean is seen as zero
	r := runMixing(t, cfg, nil)
	if !r.Pass {
		t.Fatalf("a mixing law with its controls failing should pass: %+v %+v", r.Families[0].Criteria, r.Controls)
	}
	requireControls(t, r.Controls, 5) // the fixed rotation fails two criteria, a Control each
	// The 0-or-pi law passes every mean-level criterion: only the law
	// criteria (second moment, characters) catch it.
	zp := r.ControlRuns[0]
	for _, c := range zp.Criteria {
		if c.Kind == Empirical && c.Name != critLaw && c.Name != critChars && !c.Pass {
			t.Errorf("0-or-pi law fails %q; it should fail only the law criteria: %s", c.Name, c.Detail)
		}
	}
	if zp.Far2 < 1.5*zp.Limit2 {
		t.Errorf("0-or-pi far second moment %.4f, want about 4/(d+2) = twice the limit %.4f", zp.Far2, zp.Limit2)
	}
}

// The law on {0, pi/2, pi, 3pi/2} mixes in mean (gap 0) and in second
// moment (2/(d+2), the torus's), so every empirical criterion but the
// every-frequency one passes it; that one fails it (E[cos 4 S] = 1). Run
// as a family, it must FAIL the check: with the characters criterion
// removed it would pass, and this test fails.
func TestQuarterTurnsFailOnlyTheCharacters(t *testing.T) {
	cfg := smallMixing(StepFamily{Name: "so2", Kind: "so2", Dim: 16, Angle: "gaussian", Scale: 0.6})
	cfg.Mixing.Queries = 2048
	r := runMixing(t, cfg, nil)
	var q *MixingFamily
	for i, c := range r.Controls {
		if c.Criterion == critChars {
			q = &r.ControlRuns[i]
		}
	}
	if q == nil {
		t.Fatalf("no control must fail %q: %+v", critChars, r.Controls)
	}
	if q.Pass {
		t.Fatalf("the quarter-turn law passes check 1: %+v", q.Criteria)
	}
	for _, c := range q.Criteria {
		if c.Kind != Empirical {
			continue
		}
		if c.Name == critChars && c.Pass {
			t.Errorf("quarter turns pass the characters: %s", c.Detail)
		}
		if c.Name != critChars && !c.Pass {
			t.Errorf("quarter turns fail %q (%s): the control should isolate the characters criterion", c.Name, c.Detail)
		}
	}
	if d := q.Far2 - q.Limit2; d*d > 1e-4 {
		t.Errorf("quarter turns: far second moment %.4f vs the torus's %.4f: want them alike (the second moment cannot see this law)", q.Far2, q.Limit2)
	}
	// The Gaussian family (mixing) passes the characters criterion.
	for _, c := range r.Families[0].Criteria {
		if c.Name == critChars && !c.Pass {
			t.Errorf("a mixing Gaussian law fails the characters: %s", c.Detail)
		}
	}
}

// A control that passes fails the check: replace the 0-or-pi law by a law
// that mixes, and the check must FAIL.
func TestMixingFailsWhenControlPasses(t *testing.T) {
	cfg := smallMixing(StepFamily{Name: "so2", Kind: "so2", Dim: 16, Angle: "gaussian", Scale: 0.6})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctrl := mixingControls(cfg.Mixing)
	ctrl[0].fam = StepFamily{Name: "mixing impostor", Kind: "so2", Dim: 16, Angle: "gaussian", Scale: 0.6}
	p := planMixingWith(cfg, ctrl)
	if err := runJobs(context.Background(), 0, p.jobs, nil); err != nil {
		t.Fatal(err)
	}
	r := p.finish()
	if r.Controls[0].AsItMust || r.Pass {
		t.Fatalf("a mixing law as the 0-or-pi control passed its criterion, yet the check: pass=%v (%+v)", r.Pass, r.Controls[0])
	}
}

func TestFarMassControls(t *testing.T) {
	cfg := SmokeConfig()
	p := planFarMass(cfg)
	if err := runJobs(context.Background(), 0, p.jobs, nil); err != nil {
		t.Fatal(err)
	}
	r, err := p.finish()
	if err != nil {
		t.Fatal(err)
	}
	if !r.Pass {
		t.Fatalf("far mass fails: %+v %+v", r.Criteria, r.Controls)
	}
	requireControls(t, r.Controls, 2) // no transport fails the benefit and the rate
	// With the transported samples in the control's place, the control
	// passes and the check fails.
	p.ctlPlain, p.ctlNear, p.ctlTail, p.ctlLimit = p.plain, p.near, p.tail, p.limit
	if r, err = p.finish(); err != nil {
		t.Fatal(err)
	}
	if r.Controls[0].AsItMust || r.Controls[1].AsItMust || r.Pass {
		t.Fatalf("transport as the no-transport control: controls %+v, check pass=%v", r.Controls, r.Pass)
	}
	// And the benefit criterion fails for the main run when it has no transport.
	p = planFarMass(cfg)
	p.sigma = noTransportSigma
	if err := runJobs(context.Background(), 0, p.jobs, nil); err != nil {
		t.Fatal(err)
	}
	if r, err = p.finish(); err != nil {
		t.Fatal(err)
	}
	if c := findCriterion(t, r.Criteria, critBenefit); c.Pass {
		t.Fatalf("no transport passed the benefit criterion: %s", c.Detail)
	}
}

func TestIncoherenceControl(t *testing.T) {
	cfg := SmokeConfig()
	p := planIncoherence(cfg)
	if err := runJobs(context.Background(), 0, p.jobs, nil); err != nil {
		t.Fatal(err)
	}
	r := p.finish()
	if !r.Pass {
		t.Fatalf("incoherence fails: %+v %+v", r.Criteria, r.Controls)
	}
	requireControls(t, r.Controls, 1)
	// b = 0 in the config: the check itself must fail (transport changes nothing).
	cfg.Incoherence.Background = 0
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p = planIncoherence(cfg)
	if err := runJobs(context.Background(), 0, p.jobs, nil); err != nil {
		t.Fatal(err)
	}
	if r = p.finish(); r.Pass {
		t.Fatalf("b = 0 passed the incoherence check: %+v", r.Criteria)
	}
}

func TestConcentrationControl(t *testing.T) {
	r := runConcentration(t, smallConcentration(), nil)
	requireControls(t, r.Controls, 3) // one-step routes: both KS criteria and Levy's bound
	if len(r.Vacuous) == 0 {
		t.Errorf("no vacuous bound points at s = 1: the bounds are 1 there and must be reported, not tested")
	}
}

func TestPathStepsAndControl(t *testing.T) {
	cfg := SmokeConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p := planPath(cfg)
	if err := runJobs(context.Background(), 0, p.jobs, nil); err != nil {
		t.Fatal(err)
	}
	r := p.finish()
	if !r.Pass {
		t.Fatalf("path check fails: %+v %+v", r.Criteria, r.Controls)
	}
	requireControls(t, r.Controls, 1)
	for _, b := range r.Betas {
		switch {
		case b.Beta == 2 && (b.RateNorm != 0 || b.Carrier != "decorrelation"):
			t.Errorf("beta = 2 is orthogonal: norm rate %v, carrier %s", b.RateNorm, b.Carrier)
		case b.Beta == 0.5 && b.Carrier != "contraction":
			t.Errorf("beta = 0.5: contraction should carry the forgetting (norm rate %.4f, direction %.4f)", b.RateNorm, b.RateDir)
		}
	}
}

// An identity that fails, or a control that passes, fails the check even
// when every empirical criterion passes.
func TestCheckVerdictNeedsIdentitiesAndControls(t *testing.T) {
	s := &Summary{
		Mixing:        &MixingResult{},
		Concentration: &ConcentrationResult{Criteria: []Criterion{{Name: "e", Kind: Empirical, Pass: true}}},
		FarMass:       &FarMassResult{Criteria: []Criterion{{Name: "e", Kind: Empirical, Pass: true}, {Name: "i", Kind: Identity, Pass: false}}},
		Incoherence: &IncoherenceResult{Criteria: []Criterion{{Name: "e", Kind: Empirical, Pass: true}},
			Controls: []Control{{Name: "c", AsItMust: false}}},
		Path: &PathResult{Criteria: []Criterion{{Name: "e", Kind: Empirical, Pass: true}}, Controls: []Control{{Name: "c", AsItMust: true}}},
	}
	cfg := SmokeConfig()
	got := map[string]bool{}
	for _, c := range checkSummaries(cfg, s) {
		got[c.Name] = c.Pass
	}
	want := map[string]bool{"mixing": false, "concentration": true, "farmass": false, "incoherence": false, "path": true}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("check %s: pass=%v, want %v", k, got[k], v)
		}
	}
}

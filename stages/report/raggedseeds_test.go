package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"routebench/stages/evaluate"
)

// A profile may train some variants at the first seed only (seed_variants).
// A claim is then judged on the seeds all its variants share: the paired
// claims of the three-seed variants over three seeds, a claim that names a
// one-seed variant on that seed alone (its window t interval), and the
// combined tables from whatever seeds a variant has.
func TestClaimsOnTheSeedsTheirVariantsShare(t *testing.T) {
	ps := threeSeeds([]string{"rope", "random-qk", "random-qkv", "alibi"}, func(v string, s int) *evaluate.Result {
		lp := map[string]float64{"rope": 1.0, "random-qk": 0.3, "random-qkv": 0.1, "alibi": -0.05}[v] + seedSteps[s]
		return v2Run(v, map[int]float64{2: lp / 4, 16: lp / 2, 128: lp}, nil, map[int]float64{128: 0.1})
	})
	ps[0]["random-qkv-alibi"] = v2Run("random-qkv-alibi", flatAt(0.98), nil, nil) // seed 1 only

	vt := v2Claim(t, ps, "value-transport")
	if vt.Verdict != "REPRODUCED" || vt.SeedsAlone != "3 of 3" || !strings.Contains(vt.Criterion, "over 3 seeds") {
		t.Errorf("value transport over the three seeds both variants have: %s, seeds alone %q, criterion %q", vt.Verdict, vt.SeedsAlone, vt.Criterion)
	}
	ctl := v2Claim(t, ps, "rotation-far-mass-control")
	if ctl.Verdict == "NOT TESTED" {
		t.Fatalf("random-qkv-alibi (seed 1 only) vs random-qkv: NOT TESTED (%s); it should be judged on seed 1", ctl.Evidence)
	}
	if ctl.SeedsAlone != "1 of 1" && ctl.SeedsAlone != "0 of 1" || !strings.Contains(ctl.Criterion, "on the 1 seed of 3 its variants share (95% window t intervals): ") || strings.Contains(ctl.Criterion, "t-intervals over seeds") {
		t.Errorf("a claim on one shared seed: seeds alone %q, criterion %q; want it judged on 1 of 3 seeds", ctl.SeedsAlone, ctl.Criterion)
	}
	if math.Abs(ctl.Effect.Value-0.98) > 1e-9 {
		t.Errorf("random-qkv-alibi's effect %.6f, want its one seed's prefix ratio 0.98", ctl.Effect.Value)
	}
	// Mutation: judging every claim on all seeds (the old rule) leaves this one untested.
	for _, c := range mustClaims(t, ps) {
		if c.ID == "rotation-far-mass-control" && (c.Verdict == "NOT TESTED" || !strings.HasPrefix(c.Evidence, "one seed ")) {
			t.Errorf("v1 control claim with random-qkv-alibi at one seed: %s (%s); want it judged on that seed and said so", c.Verdict, c.Evidence)
		}
	}
	// A variant with no run at all is still NOT TESTED, and says which.
	pl := v2Claim(t, ps, "path-far-mass-control")
	if pl.Verdict != "NOT TESTED" || !strings.Contains(pl.Evidence, "path") {
		t.Errorf("path-fox absent: %s (%s), want NOT TESTED naming it", pl.Verdict, pl.Evidence)
	}
}

func mustClaims(t *testing.T, ps []map[string]*evaluate.Result) []Claim {
	t.Helper()
	cs, err := ClaimsOverSeeds(ps, []uint64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// groupSeeds combines a one-seed variant from the seed it has, beside
// three-seed ones, instead of dropping it from the tables.
func TestGroupSeedsKeepsOneSeedVariants(t *testing.T) {
	cfg := Config{Variants: []string{"rope", "nope"}, Seeds: []uint64{1, 2, 3}, DefaultSeed: 1, SeedVariants: []string{"rope"}}
	var vs []*variantData
	for _, r := range cfg.runs() {
		v := &variantData{name: r.name, variant: r.variant, seed: r.seed}
		if r.variant == "rope" || r.seed == 1 {
			v.eval = v2Run(r.variant, flatAt(1.2), nil, nil)
		}
		vs = append(vs, v)
	}
	g, err := groupSeeds(cfg, vs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range g.combined {
		if c.eval == nil {
			t.Errorf("combined %s has no results; a variant trained at one seed should show that seed's", c.variant)
		}
	}
}

// RoPE extended at inference is a report variant of its own (rope+yarn at
// every seed, rope+pi at the first): the claims read it per seed under
// that name, and the tables combine it like any variant.
func TestGroupSeedsReadsRopeExtensions(t *testing.T) {
	cfg := Config{Variants: []string{"rope", "rope+yarn", "rope+pi"}, Seeds: []uint64{1, 2, 3}, DefaultSeed: 1, SeedVariants: []string{"rope"}}
	var vs []*variantData
	for _, r := range cfg.runs() {
		v := &variantData{name: r.name, variant: r.variant, seed: r.seed}
		if r.variant != "rope+pi" || r.seed == 1 {
			v.eval = v2Run(r.variant, flatAt(1.2), nil, nil)
		}
		vs = append(vs, v)
	}
	g, err := groupSeeds(cfg, vs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfg.Seeds {
		if g.perSeed[i]["rope+yarn"] == nil {
			t.Errorf("seed %d: perSeed has no rope+yarn", cfg.Seeds[i])
		}
		if (g.perSeed[i]["rope+pi"] != nil) != (i == 0) {
			t.Errorf("seed %d: perSeed rope+pi is %v, want it at the first seed only", cfg.Seeds[i], g.perSeed[i]["rope+pi"] != nil)
		}
	}
	if len(g.combined) != 3 || g.combined[1].variant != "rope+yarn" || g.combined[1].eval == nil || g.combined[2].eval == nil {
		t.Errorf("combined %v: want rope, rope+yarn, rope+pi with results", g.combined)
	}
	if trainedVariant("rope+yarn") != "rope" || trainedVariant("random-qk") != "random-qk" {
		t.Error("trainedVariant: want rope for rope+yarn and a plain variant unchanged")
	}
}

// A RoPE extension evaluates some of the profile's lengths (1, 16, 128 T):
// its cells sit under their own lengths in the ratio and prefix tables,
// "-" elsewhere, not shifted left under the shorter lengths.
func TestTablesAlignExtensionLengths(t *testing.T) {
	full := v2Run("rope", map[int]float64{2: 0.1, 16: 0.2, 128: 0.3}, nil, nil)
	ext := v2Run("rope+yarn", map[int]float64{2: 0.1, 16: 0.2, 128: 0.3}, nil, nil)
	ext.Lengths = slices.Delete(ext.Lengths, 1, 2) // drop 2T
	vs := []*variantData{{name: "rope", variant: "rope", eval: full}, {name: "rope+yarn", variant: "rope+yarn", eval: ext}}
	var b strings.Builder
	renderMainTable(&b, vs, 128, nil, nil, nil) // and the prefix table after it
	n := 0
	for _, line := range strings.Split(b.String(), "\n") {
		if !strings.HasPrefix(line, "| rope+yarn |") {
			continue
		}
		n++
		cells := strings.Split(line, "|")
		if len(cells) < 5 || strings.TrimSpace(cells[len(cells)-4]) != "-" || !strings.HasPrefix(strings.TrimSpace(cells[len(cells)-2]), "1.35") {
			t.Errorf("row %q: want - under 2T and 1.35 (exp 0.3) under 128T", line)
		}
	}
	if n != 2 {
		t.Errorf("%d rope+yarn rows in\n%s\nwant 2 (ratio and prefix tables)", n, b.String())
	}
}

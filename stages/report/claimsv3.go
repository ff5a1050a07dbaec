package report

import (
	"fmt"
	"math"
	"strings"

	"routebench/stages/evaluate"
	"routebench/stats"
	"routebench/stats/decide"
)

// Claims v3 (issue 38), pre-registered in docs/statistics.md before the
// run that judges them: every interval is a t interval whose coverage
// stats/coverage_test.go checks; the multi-seed claims read the crossed
// seeds x windows interval (stats.CrossedT), which covers a new seed and a
// new text window; each claim has a p-value (decide.EdgeP, p < 0.05
// exactly when its interval clears its edge; a two-part claim the larger
// p), the family is adjusted by Holm, and each claim's power at its design
// is simulated (decide.Power). The v2 and v1 rows stay beside them.

// V3Suffix marks a v3 claim's ID, V3XSuffix the v3x claim's (its own
// family: RoPE extended at inference, issue 41), V5KSuffix the v5k
// claims' (their own family: KERPLE's log bias, issue 41).
const (
	V3Suffix  = "-v3"
	V3XSuffix = "-v3x"
	V5KSuffix = "-v5k"
)

// v3Part is one interval a v3 claim reads: its per-(seed, window) log
// values, the estimate, the edge and the side the claim puts it on.
type v3Part struct {
	what  string
	y     [][]float64
	est   stats.Estimate
	edge  float64 // log scale
	side  decide.Side
	p     float64
	ratio bool // shown as exp(.)
	// gate, when set, is a control's text (gatePart): the part is a
	// condition on the control, p 0 when it fails as it must, 1 if not.
	gate string
	// exact, when set, is an exact test's text (binomialPart): p is that
	// test's, est its Clopper-Pearson interval, and y is empty.
	exact string
}

func newPart(what string, y [][]float64, edge float64, side decide.Side, ratio bool) v3Part {
	p := v3Part{what: what, y: y, edge: edge, side: side, ratio: ratio}
	p.est = stats.CrossedT(y)
	p.p = decide.EdgeP(p.est, edge, side)
	return p
}

func (p v3Part) String() string {
	if p.gate != "" {
		return p.gate
	}
	if p.exact != "" {
		return p.exact
	}
	if p.noSpread() {
		return fmt.Sprintf("%s: not testable (no spread: every value %.4g, %s)", p.what, p.est.Mean, p.est.Covers)
	}
	iv, edge := p.est.Interval(), p.edge
	if p.ratio {
		iv, edge = p.est.Exp(), math.Exp(p.edge)
	}
	rel := map[decide.Side]string{decide.Below: "<", decide.Above: ">"}[p.side]
	if p.ratio {
		return fmt.Sprintf("%s %s (%s, df %.1f) %s %.2f, p %s", p.what, iv, p.est.Covers, p.est.DF, rel, edge, pString(p.p))
	}
	return fmt.Sprintf("%s %.4f [%.4f, %.4f] (%s, df %.1f) %s %.2f, p %s", p.what, iv.Value, iv.Lo, iv.Hi, p.est.Covers, p.est.DF, rel, edge, pString(p.p))
}

// noSpread reports whether the part's values are all the same: an
// interval of width 0 that tests nothing (decide.EdgeP is NaN).
func (p v3Part) noSpread() bool {
	return p.gate == "" && p.exact == "" && p.est.SE == 0 && !math.IsNaN(p.est.Mean)
}

func pString(p float64) string {
	switch {
	case math.IsNaN(p):
		return "-"
	case p < 0.001:
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// V3 is a v3 claim's decision beside its Claim row.
type V3 struct {
	P, PHolm float64
	Holm     string // the Holm-adjusted verdict
	Covers   string
	Power    float64 // at the design, for the decisive part
	Need     string  // seeds (or windows) for 80% power
	// Invalid, when set, is why the criterion was found invalid after its
	// run (registrations.json); Beside, what RESULTS.md shows beside it.
	Invalid, Beside string
}

// v3Judge reads seed-by-variant results.
type v3Judge struct{ perSeed []map[string]*evaluate.Result }

// table is variant values per (seed, window) at multiplier m (0: the
// longest), over the seeds every variant in vs shares, and how many seeds.
func (j v3Judge) table(vs []string, m int, f func(rs []*evaluate.Result, L int) ([]float64, error)) ([][]float64, error) {
	idx := seedsWith(j.perSeed, vs...)
	if len(idx) == 0 {
		return nil, fmt.Errorf("no seed has %s", strings.Join(vs, " and "))
	}
	var y [][]float64
	for _, i := range idx {
		var rs []*evaluate.Result
		for _, v := range vs {
			rs = append(rs, j.perSeed[i][v])
		}
		k := lengthIndex(rs[0], m)
		if k < 0 {
			return nil, fmt.Errorf("%s has no length at or below %dT", vs[0], m)
		}
		row, err := f(rs, rs[0].Lengths[k].L)
		if err != nil {
			return nil, err
		}
		if len(y) > 0 && len(row) != len(y[0]) {
			return nil, fmt.Errorf("%s: seeds scored %d and %d windows; the crossed interval needs the same windows at every seed", strings.Join(vs, ", "), len(y[0]), len(row))
		}
		y = append(y, row)
	}
	return y, nil
}

// lengthOfL is r's result at length L.
func lengthOfL(r *evaluate.Result, L int) (evaluate.LengthResult, error) {
	for _, l := range r.Lengths {
		if l.L == L {
			return l, nil
		}
	}
	return evaluate.LengthResult{}, fmt.Errorf("%s was not evaluated at length %d", r.Variant, L)
}

// prefixRow is a variant's log prefix ratio per window at length L.
func prefixRow(rs []*evaluate.Result, L int) ([]float64, error) {
	l, err := lengthOfL(rs[0], L)
	if err != nil {
		return nil, err
	}
	if len(l.PrefixLoss) == 0 {
		return nil, errFormat1(rs[0].Variant)
	}
	return stats.Differences(l.WindowLoss, l.PrefixLoss)
}

// pairedRow is A's log prefix ratio minus B's per window at length L.
func pairedRow(rs []*evaluate.Result, L int) ([]float64, error) {
	a, err := prefixRow(rs[:1], L)
	if err != nil {
		return nil, err
	}
	b, err := prefixRow(rs[1:], L)
	if err != nil {
		return nil, err
	}
	return stats.Differences(a, b)
}

// lossRow is A's window loss minus B's at length L (the same windows).
func lossRow(rs []*evaluate.Result, L int) ([]float64, error) {
	a, err := lengthOfL(rs[0], L)
	if err != nil {
		return nil, err
	}
	b, err := lengthOfL(rs[1], L)
	if err != nil {
		return nil, err
	}
	return stats.Differences(a.WindowLoss, b.WindowLoss)
}

// one is a one-interval part at multiplier m (0: the longest), named what
// at the length it was read at (a profile may stop short of 16T).
func (j v3Judge) one(what string, vs []string, m int, f func(rs []*evaluate.Result, L int) ([]float64, error), edge float64, side decide.Side) (v3Part, error) {
	y, err := j.table(vs, m, f)
	if err != nil {
		return v3Part{}, err
	}
	r := j.perSeed[seedsWith(j.perSeed, vs...)[0]][vs[0]]
	return newPart(fmt.Sprintf("%s at %dT", what, r.Lengths[lengthIndex(r, m)].Multiplier), y, edge, side, true), nil
}

// at16And128 is f's part at 16T and at the longest length, in that order
// (a profile whose longest length is <= 16T reads one length once).
func (j v3Judge) at16And128(what string, vs []string, f func(rs []*evaluate.Result, L int) ([]float64, error), edge float64, side decide.Side) ([]v3Part, error) {
	var ps []v3Part
	seen := map[string]bool{}
	for _, m := range []int{16, 0} {
		p, err := j.one(what, vs, m, f, edge, side)
		if err != nil {
			return nil, err
		}
		if !seen[p.what] {
			seen[p.what] = true
			ps = append(ps, p)
		}
	}
	return ps, nil
}

// flatAt16And128 is each variant's "flat" part (prefix ratio <= 1.10) at
// 16T and at the longest length, in that order.
func (j v3Judge) flatAt16And128(vs ...string) ([]v3Part, error) {
	var ps []v3Part
	for _, v := range vs {
		p, err := j.at16And128(v, []string{v}, prefixRow, math.Log(flatLimitV2), decide.Below)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p...)
	}
	return ps, nil
}

// judgeRegistered judges specs, built over the runs the family with suffix reads
// (Registration.selectSeeds), as one Holm family.
func judgeRegistered(perSeed []map[string]*evaluate.Result, seeds []uint64, suffix string, specs func(j v3Judge) []v3Spec) ([]Claim, []V3) {
	reg := registrationOf(suffix)
	ps, ss := reg.selectSeeds(perSeed, seeds)
	return judgeFamily(specs(v3Judge{ps}), ss, reg)
}

// ClaimsV3 judges the v3 claims, and the later families judged on the same
// tables (v3x, v3x2, v5k), over perSeed (seed i's results by variant; seeds
// their training seeds, which decide the runs each family reads and its
// confirmatory label; nil: every run, no label).
func ClaimsV3(perSeed []map[string]*evaluate.Result, seeds []uint64) ([]Claim, []V3) {
	flat := math.Log(flatLimitV2)
	claims, dec := judgeRegistered(perSeed, seeds, V3Suffix, func(j v3Judge) []v3Spec {
		return []v3Spec{
			{"accumulated-beats-rope", "accumulated transformations extrapolate better than RoPE (C1)",
				"at 16T, random-qk's prefix ratio over rope's (paired per seed and window): upper end < 1",
				func() ([]v3Part, error) {
					p, err := j.one("random-qk / rope", []string{"random-qk", "rope"}, 16, pairedRow, 0, decide.Below)
					return []v3Part{p}, err
				}},
			{"value-transport", "transporting the values too (random-qkv) extrapolates better than Q/K only (C2)",
				"at 128T, random-qkv's prefix ratio over random-qk's (paired): upper end < 1",
				func() ([]v3Part, error) {
					p, err := j.one("random-qkv / random-qk", []string{"random-qkv", "random-qk"}, 0, pairedRow, 0, decide.Below)
					return []v3Part{p}, err
				}},
			{"alibi-flat", "ALiBi stays flat far beyond the training length",
				"ALiBi's prefix ratio at 128T: upper end <= 1.10",
				func() ([]v3Part, error) {
					p, err := j.one("alibi", []string{"alibi"}, 0, prefixRow, flat, decide.Below)
					return []v3Part{p}, err
				}},
			{"rotation-only-degrades", "rotation-only attention eventually degrades, as its far mass grows more than ALiBi's",
				"random-qk's prefix ratio at 128T: lower end > 1; and its far-mass growth beyond T from 2T to 128T minus ALiBi's, t over seeds: lower end > 0",
				func() ([]v3Part, error) {
					p, err := j.one("random-qk", []string{"random-qk"}, 0, prefixRow, 0, decide.Above)
					if err != nil {
						return nil, err
					}
					y, err := j.table([]string{"random-qk", "alibi"}, 0, func(rs []*evaluate.Result, _ int) ([]float64, error) {
						gq, _, _, okq := farGrowth(rs[:1])
						ga, _, _, oka := farGrowth(rs[1:])
						if !okq || !oka {
							return nil, fmt.Errorf("no far mass beyond T at 2T and the longest length")
						}
						return []float64{gq - ga}, nil
					})
					if err != nil {
						return nil, err
					}
					return []v3Part{p, newPart("far-mass growth random-qk - alibi", y, 0, decide.Above, false)}, nil
				}},
			{"learned-flat", "a learned token-dependent rotation keeps train-length perplexity far beyond T",
				"learned-qk's and learned-qkv's prefix ratios at 16T and at 128T: all four upper ends <= 1.10",
				func() ([]v3Part, error) { return j.flatAt16And128("learned-qk", "learned-qkv") }},
			{"rotation-far-mass-control", "rotation plus an explicit far-mass control (random-qkv-alibi) stays flat while keeping the rotation's PPL at T",
				"random-qkv-alibi's prefix ratio at 128T: upper end <= 1.10; and its PPL at T over random-qkv's (paired on the T windows): upper end <= 1.03",
				func() ([]v3Part, error) { return j.control("random-qkv-alibi", "random-qkv") }},
			{"path-far-mass-control", "PaTH plus FoX's forgetting gate (path-fox) stays flat while keeping PaTH's PPL at T",
				"path-fox's prefix ratio at 128T: upper end <= 1.10; and its PPL at T over path's (paired on the T windows): upper end <= 1.03",
				func() ([]v3Part, error) { return j.control("path-fox", "path") }},
		}
	})
	// v3x (issue 41): a family of its own, so that adding it changes none
	// of the seven's Holm adjustment (docs/statistics.md, claim v3x).
	xc, xd := judgeRegistered(perSeed, seeds, V3XSuffix, func(j v3Judge) []v3Spec {
		return []v3Spec{{"accumulated-beats-extended-rope", "accumulated transformations extrapolate better than RoPE extended at inference by YaRN (v3x)",
			"random-qk's prefix ratio over rope+yarn's (paired per seed and window): upper end < 1 at 16T and at 128T",
			func() ([]v3Part, error) {
				var ps []v3Part
				for _, m := range []int{16, 0} {
					p, err := j.one("random-qk / rope+yarn", []string{"random-qk", "rope+yarn"}, m, pairedRow, 0, decide.Below)
					if err != nil {
						return nil, err
					}
					ps = append(ps, p)
				}
				return ps, nil
			}}}
	})
	// v3x was found invalid after its run: beside its row, the v3x2
	// statistic on v3x's own runs, labelled exploratory (issue 52).
	if reg := registrationOf(V3XSuffix); reg.FoundInvalid != "" {
		ps, _ := reg.selectSeeds(perSeed, seeds)
		for k := range xd {
			xd[k].Invalid = reg.FoundInvalid
			xd[k].Beside = "exploratory, on the same runs, each model against its own unscaled first T (v3x2's statistic): " + unscaledBeside(v3Judge{ps}, []string{"yarn", "pi", "ntk"})
		}
	}
	claims, dec = append(claims, xc...), append(dec, xd...)
	x2c, x2d := claimsV3X2(perSeed, seeds)
	claims, dec = append(claims, x2c...), append(dec, x2d...)
	// v5k (issue 41's worked example): kerple-log at one seed, so its
	// intervals are over that run's windows (docs/statistics.md, claims v5k).
	kc, kd := judgeRegistered(perSeed, seeds, V5KSuffix, func(j v3Judge) []v3Spec {
		return []v3Spec{
			{"kerple-flat", "KERPLE's learned log bias (kerple-log) stays flat far beyond the training length (v5k)",
				"kerple-log's prefix ratio at 16T and at 128T: both upper ends <= 1.10",
				func() ([]v3Part, error) { return j.flatAt16And128("kerple-log") }},
			{"kerple-beats-alibi", "KERPLE's learned log bias extrapolates better than ALiBi's fixed linear one (v5k)",
				"at 128T, kerple-log's prefix ratio over alibi's (paired per window on the seeds both have): upper end < 1",
				func() ([]v3Part, error) {
					p, err := j.one("kerple-log / alibi", []string{"kerple-log", "alibi"}, 0, pairedRow, 0, decide.Below)
					return []v3Part{p}, err
				}},
		}
	})
	return append(claims, kc...), append(dec, kd...)
}

// v3Spec is a claim to judge: its ID (without suffix), the claim, the
// criterion in words, and the parts it reads.
type v3Spec struct {
	id, claim, criterion string
	parts                func() ([]v3Part, error)
}

// judgeFamily judges specs, read on seeds, as one Holm family of reg's
// (its suffix marks their IDs): exploratory unless reg registered every
// seed as confirmatory (no label when seeds are not known).
func judgeFamily(specs []v3Spec, seeds []uint64, reg Registration) ([]Claim, []V3) {
	suffix := reg.Suffix
	exp := seeds != nil && !reg.ConfirmatoryOn(seeds)
	claims := make([]Claim, len(specs))
	dec := make([]V3, len(specs))
	ps := make([]float64, len(specs))
	decisive := make([]v3Part, len(specs))
	for k, s := range specs {
		c := Claim{ID: s.id + suffix, Claim: s.claim, Criterion: s.criterion, Version: "v3"}
		parts, err := s.parts()
		ps[k] = math.NaN()
		if err != nil {
			c.Verdict, c.Evidence = "NOT TESTED", err.Error()
			claims[k] = c
			continue
		}
		var ev []string
		worst := 0
		for i, p := range parts {
			ev = append(ev, p.String())
			if math.IsNaN(p.p) || p.p > parts[worst].p {
				worst = i
			}
		}
		ps[k], decisive[k] = parts[worst].p, parts[worst]
		c.Evidence = strings.Join(ev, "; ")
		iv := parts[worst].est.Interval()
		if parts[worst].ratio {
			iv = parts[worst].est.Exp()
			c.Threshold = math.Exp(parts[worst].edge)
		} else {
			c.Threshold = parts[worst].edge
		}
		c.Effect = &iv
		switch {
		case math.IsNaN(ps[k]) && parts[worst].noSpread():
			c.Verdict = "NOT TESTED"
			c.Evidence += " (not testable: no spread)"
		case math.IsNaN(ps[k]) && parts[worst].exact != "":
			c.Verdict = "NOT TESTED" // the exact part says why
		case math.IsNaN(ps[k]):
			c.Verdict = "NOT TESTED"
			c.Evidence += " (one window or one seed: no interval)"
		default:
			c.Verdict = verdict(ps[k] < decide.Alpha)
		}
		if exp && c.Verdict != "NOT TESTED" {
			c.Verdict += " (exploratory)"
		}
		claims[k] = c
		dec[k].Covers = parts[worst].est.Covers
	}
	adj := decide.Holm(ps)
	for k := range specs {
		dec[k].P, dec[k].PHolm = ps[k], adj[k]
		if math.IsNaN(ps[k]) {
			dec[k].Holm, dec[k].Power = "NOT TESTED", math.NaN()
			continue
		}
		dec[k].Holm = verdict(adj[k] < decide.Alpha)
		if exp {
			dec[k].Holm += " (exploratory)"
		}
		dec[k].Power, dec[k].Need = designPower(decisive[k], uint64(k))
	}
	return claims, dec
}

// control is a far-mass control's two parts: the controlled variant flat
// at 128T, and its PPL at T paired against the base's on the T windows.
func (j v3Judge) control(controlled, base string) ([]v3Part, error) {
	y, err := j.table([]string{controlled}, 0, prefixRow)
	if err != nil {
		return nil, err
	}
	r := j.perSeed[seedsWith(j.perSeed, controlled)[0]][controlled]
	flat := newPart(fmt.Sprintf("%s at %dT", controlled, Longest(r).Multiplier), y, math.Log(flatLimitV2), decide.Below, true)
	y, err = j.table([]string{controlled, base}, 1, lossRow)
	if err != nil {
		return nil, err
	}
	keep := newPart(fmt.Sprintf("PPL at T, %s / %s", controlled, base), y, math.Log(1+keepPPLTolerance), decide.Below, true)
	return []v3Part{flat, keep}, nil
}

// designPower is the decisive part's power at its own design, if its
// measured mean and variance components held (decide.Power, averaged over
// the components' uncertainty), and the seeds (several seeds) or windows
// (one seed) that would give 80%.
func designPower(p v3Part, seed uint64) (float64, string) {
	c, _, ok := stats.NewCrossed(p.y)
	if !ok {
		return math.NaN(), "-"
	}
	comp := decide.ComponentsOf(c)
	pw := decide.Power(p.est.Mean, comp, c.S, c.W, p.edge, p.side, decide.PowerSims, seed)
	const most = 64
	switch {
	case c.S > 1 && c.W > 1, c.W == 1:
		n := decide.SeedsFor(p.est.Mean, comp, c.W, p.edge, p.side, most, seed)
		if n > most {
			return pw, fmt.Sprintf("> %d seeds", most)
		}
		return pw, fmt.Sprintf("%d seeds", n)
	default:
		n := decide.WindowsFor(p.est.Mean, comp, 1, p.edge, p.side, 4096, seed)
		if n > 4096 {
			return pw, "> 4096 windows"
		}
		return pw, fmt.Sprintf("%d windows", n)
	}
}

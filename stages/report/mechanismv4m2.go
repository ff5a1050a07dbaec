package report

import (
	"fmt"
	"math"
	"strings"

	"routebench/stages/evaluate"
	"routebench/stats/decide"
)

// The mechanism claims v4m2 (issue 52), pre-registered in
// docs/statistics.md (2026-12-07) before their code and run, replacing
// v4m's M1-M3, whose rows stay: M1's edge was cleared by any encoding
// without a distance bias, M2 weighed a row with 1e-6 far mass as much as
// one with 0.9, and M3 could not fail (the shared random table's n* comes
// from the table and the text alone).

// V4M2Suffix marks a v4m2 claim's ID.
const V4M2Suffix = "-v4m2"

// m3Factor is the agreement band of M3' (v4m2): a measured n* within a factor 2 of the
// gap's predicted n*, either way.
var m3Factor = math.Log(2)

// m3MinUnits is the fewest units with a predicted n* a variant needs to be
// tested by M3'.
const m3MinUnits = 8

// m3Variants are the models M3' reads: the accumulated variants whose steps are
// learned or depend on the content (not the shared random table).
var m3Variants = []string{"learned-qk", "learned-qkv", "learned-proj-qkv", "path"}

// growthOverHalf is, per window, A's far-mass growth minus half of B's
// (rs = [A, B]; B is nope, attention without a position signal).
func growthOverHalf(rs []*evaluate.Result, _ int) ([]float64, error) {
	a, err := farGrowthRow(rs[0])
	if err != nil {
		return nil, err
	}
	b, err := farGrowthRow(rs[1])
	if err != nil {
		return nil, err
	}
	if len(a) != len(b) {
		return nil, fmt.Errorf("%s has far mass on %d windows and %s on %d; M1' pairs the same windows", rs[0].Variant, len(a), rs[1].Variant, len(b))
	}
	out := make([]float64, len(a))
	for w := range out {
		out[w] = a[w] - b[w]/2
	}
	return out, nil
}

// coherenceRow is a run's per-window far coherence at L, mass-weighted
// (M2') or not (v4m's, shown beside it).
func coherenceRow(r *evaluate.Result, L int, weighted bool) ([]float64, error) {
	ml, err := mechAt(r, L)
	if err != nil {
		return nil, err
	}
	if !weighted {
		return ml.FarCoherence, nil
	}
	if len(ml.FarCoherenceWeighted) == 0 && len(ml.FarCoherence) > 0 {
		return nil, fmt.Errorf("%s has no mass-weighted far coherence at length %d (eval.json before issue 52: evaluate again)", r.Variant, L)
	}
	return ml.FarCoherenceWeighted, nil
}

// coherenceParts are random-qkv's far coherence minus random-qk's per
// (seed, window), one part per length from 2T, mass-weighted or not.
func (j v3Judge) coherenceParts(weighted bool) ([]v3Part, error) {
	vs := []string{"random-qkv", "random-qk"}
	idx := seedsWith(j.perSeed, vs...)
	if len(idx) == 0 {
		return nil, fmt.Errorf("no seed has random-qk and random-qkv")
	}
	r0 := j.perSeed[idx[0]]["random-qk"]
	T := r0.Protocol.Context
	what := "mass-weighted coherence"
	if !weighted {
		what = "unweighted coherence"
	}
	var ps []v3Part
	for _, l := range r0.Lengths {
		if l.L < 2*T {
			continue
		}
		y, err := j.table(vs, l.Multiplier, func(rs []*evaluate.Result, L int) ([]float64, error) {
			a, err := coherenceRow(rs[0], L, weighted)
			if err != nil {
				return nil, err
			}
			b, err := coherenceRow(rs[1], L, weighted)
			if err != nil {
				return nil, err
			}
			if len(a) != len(b) || len(a) == 0 {
				return nil, fmt.Errorf("far coherence at %d on %d and %d windows", L, len(a), len(b))
			}
			out := make([]float64, len(a))
			for w := range out {
				out[w] = a[w] - b[w]
			}
			return out, nil
		})
		if err != nil {
			return nil, err
		}
		ps = append(ps, newPart(fmt.Sprintf("%s qkv - qk at %dT", what, l.Multiplier), y, 0, decide.Below, false))
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("no length from 2T")
	}
	return ps, nil
}

// m3Count is one model's M3' units: those with a predicted n* at the
// longest length (a shared table's first layer only: its other layers
// repeat it), how many agree on the held-out text and how many on the
// repeated-byte control.
type m3Count struct {
	variant         string
	seedIdx         int
	units, agree    int
	control         int
	sharedTableNote string
}

// agrees says whether a measured n* (0: not found) is within m3Factor of a
// predicted one.
func agrees(measured, predicted int) bool {
	return measured > 0 && math.Abs(math.Log(float64(measured)/float64(predicted))) <= m3Factor+1e-12
}

// windowUnits counts r's M3' units (m3Count).
func windowUnits(r *evaluate.Result) (m3Count, error) {
	c := m3Count{variant: r.Variant}
	mx := r.Mixing
	if mx == nil || len(mx.Heads) == 0 {
		return c, fmt.Errorf("%s: no route mixing window in eval.json (format 4, prefixes design)", r.Variant)
	}
	if mx.Repeated == nil {
		return c, fmt.Errorf("%s: no repeated-byte control in eval.json's route mixing window (before issue 52: evaluate again)", r.Variant)
	}
	if mx.SharedTable {
		c.sharedTableNote = ", layer 0 only (one token table for every layer)"
	}
	for _, h := range mx.Heads {
		if h.Predicted <= 0 || mx.SharedTable && h.Layer > 0 {
			continue
		}
		c.units++
		if agrees(h.Window, h.Predicted) {
			c.agree++
		}
		if agrees(h.Repeated, h.Predicted) {
			c.control++
		}
	}
	return c, nil
}

// binomialPart is a variant's exact one-sided binomial part: k of n units
// agree, against P(agree) <= 1/2; p NaN (not tested) below m3MinUnits.
func binomialPart(what string, k, n int) v3Part {
	p := v3Part{what: what, edge: 0.5, side: decide.Above, p: math.NaN()}
	if n > 0 {
		p.est = decide.ClopperPearson(k, n, "units")
	}
	if n >= m3MinUnits {
		p.p = decide.BinomialHalfP(k, n)
		p.exact = fmt.Sprintf("%s: %d of %d units agree (%.2f, exact %s), one-sided binomial p %s", what, k, n, p.est.Mean, p.est.Interval(), pString(p.p))
	} else {
		p.exact = fmt.Sprintf("%s: %d of %d units agree; not tested (fewer than %d units with a predicted n*)", what, k, n, m3MinUnits)
	}
	return p
}

// windowMatchParts are the parts of M3': per variant the held-out text's
// binomial part, then the repeated-byte control as one gate over every
// variant (it fails as it must when some variant's control p >= 0.05).
func (j v3Judge) windowMatchParts() ([]v3Part, error) {
	var ps, ctl []v3Part
	for _, v := range m3Variants {
		idx := seedsWith(j.perSeed, v)
		if len(idx) == 0 {
			return nil, fmt.Errorf("no seed has %s", v)
		}
		c, err := windowUnits(j.perSeed[idx[0]][v]) // the first seed that has it (31 in the registered run)
		if err != nil {
			return nil, err
		}
		ps = append(ps, binomialPart(v+c.sharedTableNote, c.agree, c.units))
		ctl = append(ctl, binomialPart(v+" on byte 0x20 repeated", c.control, c.units))
	}
	for _, c := range ctl {
		if math.IsNaN(c.p) {
			return append(ps, c), nil // a control not testable leaves the claim not tested
		}
	}
	return append(ps, gatePart("repeated byte", ctl)), nil
}

// ClaimsV4M2 judges the mechanism claims v4m2 as one Holm family, on the
// runs their registration reads.
func ClaimsV4M2(perSeed []map[string]*evaluate.Result, seeds []uint64) ([]Claim, []V3) {
	var beside string
	claims, dec := judgeRegistered(perSeed, seeds, V4M2Suffix, func(j v3Judge) []v3Spec {
		if ps, err := j.coherenceParts(false); err == nil {
			var parts []string
			for _, p := range ps {
				parts = append(parts, p.String())
			}
			beside = "descriptive, not judged (v4m's unweighted coherence): " + strings.Join(parts, "; ")
		}
		return []v3Spec{
			{"far-mass-grows", "the far mass of rotation-only attention grows at least half as much as with no position signal at all, and ALiBi's does not (M1')",
				"random-qk's far-mass growth beyond T from 2T to the longest length minus half of nope's (paired per seed and window): lower end > 0; and the same for alibi does not clear it (the control)",
				func() ([]v3Part, error) {
					y, err := j.table([]string{"random-qk", "nope"}, 0, growthOverHalf)
					if err != nil {
						return nil, err
					}
					ya, err := j.table([]string{"alibi", "nope"}, 0, growthOverHalf)
					if err != nil {
						return nil, err
					}
					main := newPart("far-mass growth, random-qk - nope/2", y, 0, decide.Above, false)
					ctl := newPart("far-mass growth, alibi - nope/2", ya, 0, decide.Above, false)
					return []v3Part{main, gatePart("alibi", []v3Part{ctl})}, nil
				}},
			{"transport-incoherent", "transporting the values decorrelates the far values the query sums, weighted by the mass it puts on them (M2')",
				"random-qkv's mass-weighted far coherence minus random-qk's (paired per seed and window): upper end < 0 at every length from 2T",
				func() ([]v3Part, error) { return j.coherenceParts(true) }},
			{"window-matches-gap", "a learned or content-dependent route mixes within the window its measured spectral gap predicts (M3')",
				fmt.Sprintf("for each of %s, over its units at the longest length with a predicted n*: more than half have a measured n* within a factor 2 of it (one-sided exact binomial, p the largest; not tested below %d units); and on a text of one repeated byte (0x20) the same units do not (the control)", strings.Join(m3Variants, ", "), m3MinUnits),
				func() ([]v3Part, error) { return j.windowMatchParts() }},
		}
	})
	for k := range claims {
		claims[k].Version = "v4m2"
		if strings.HasPrefix(claims[k].ID, "transport-incoherent") && beside != "" {
			dec[k].Beside = beside
		}
	}
	return claims, dec
}

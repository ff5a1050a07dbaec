package report

import (
	"strings"
	"testing"

	"routebench/stages/evaluate"
	"routebench/stats"
)

// madeResult builds an eval result at training length T = 128 with the
// given ratio intervals per multiplier and far mass beyond T per multiplier.
func madeResult(variant string, ratios map[int]stats.Interval, far map[int]float64) *evaluate.Result {
	const T = 128
	r := &evaluate.Result{Variant: variant, Profile: "test", Protocol: evaluate.Config{Variant: variant, Context: T}}
	for _, m := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
		iv, ok := ratios[m]
		if !ok {
			continue
		}
		l := evaluate.LengthResult{L: m * T, Multiplier: m, Ratio: iv}
		if f, ok := far[m]; ok {
			l.FarMass = []evaluate.FarMass{{Distance: T / 4, Heads: 8, Mean: 2 * f}, {Distance: T, Heads: 8, Mean: f}}
		}
		r.Lengths = append(r.Lengths, l)
	}
	return r
}

// withPPLAtT sets the PPL at T of a made result.
func withPPLAtT(r *evaluate.Result, ppl float64) *evaluate.Result {
	r.Lengths[0].PPL = iv(ppl, 0.9*ppl, 1.1*ppl)
	return r
}

// fix is a random-qkv-alibi result with the given ratio at 128T and PPL at
// T, beside a random-qkv one with PPL 10 at T.
func fix(ratio stats.Interval, ppl float64) map[string]*evaluate.Result {
	return map[string]*evaluate.Result{
		"random-qkv-alibi": withPPLAtT(madeResult("random-qkv-alibi", at(iv(1, 1, 1), ratio), nil), ppl),
		"random-qkv":       withPPLAtT(madeResult("random-qkv", at(iv(1.2, 1.1, 1.3), iv(1.5, 1.4, 1.6)), nil), 10),
	}
}

func iv(v, lo, hi float64) stats.Interval { return stats.Interval{Value: v, Lo: lo, Hi: hi} }

// at16 and at128 are ratios at T, 16T and 128T.
func at(r16, r128 stats.Interval) map[int]stats.Interval {
	return map[int]stats.Interval{1: iv(1, 1, 1), 16: r16, 128: r128}
}

// verdictOf returns the verdict of the claim whose text contains key.
func verdictOf(t *testing.T, ev map[string]*evaluate.Result, key string) Claim {
	t.Helper()
	for _, c := range Claims(ev) {
		if strings.Contains(c.Claim, key) {
			return c
		}
	}
	t.Fatalf("no claim mentions %q", key)
	return Claim{}
}

// Every claim on constructed results on both sides of its criterion and at
// its edge, and NOT TESTED when a variant it needs is missing.
func TestClaimVerdicts(t *testing.T) {
	one := at(iv(1, 1, 1), iv(1, 1, 1))
	for _, tc := range []struct {
		name, claim, want string
		ev                map[string]*evaluate.Result
	}{
		// 1. random-qk below rope at 16T: intervals must not overlap.
		{"accumulated beats rope", "better than RoPE", "REPRODUCED", map[string]*evaluate.Result{
			"random-qk": madeResult("random-qk", at(iv(1.2, 1.1, 1.3), iv(2, 2, 2)), nil),
			"rope":      madeResult("rope", at(iv(2, 1.31, 2.5), iv(3, 3, 3)), nil)}},
		{"accumulated touches rope", "better than RoPE", "NOT REPRODUCED", map[string]*evaluate.Result{
			"random-qk": madeResult("random-qk", at(iv(1.2, 1.1, 1.3), iv(2, 2, 2)), nil),
			"rope":      madeResult("rope", at(iv(2, 1.3, 2.5), iv(3, 3, 3)), nil)}},
		{"accumulated worse than rope", "better than RoPE", "NOT REPRODUCED", map[string]*evaluate.Result{
			"random-qk": madeResult("random-qk", at(iv(3, 2.9, 3.1), iv(2, 2, 2)), nil),
			"rope":      madeResult("rope", at(iv(2, 1.9, 2.1), iv(3, 3, 3)), nil)}},
		{"rope missing", "better than RoPE", "NOT TESTED", map[string]*evaluate.Result{
			"random-qk": madeResult("random-qk", one, nil)}},
		// 2. random-qkv below random-qk at the longest length.
		{"value transport helps", "Q/K/V", "REPRODUCED", map[string]*evaluate.Result{
			"random-qkv": madeResult("random-qkv", at(iv(1, 1, 1), iv(1.5, 1.4, 1.59)), nil),
			"random-qk":  madeResult("random-qk", at(iv(1, 1, 1), iv(2, 1.6, 2.4)), nil)}},
		{"value transport at the edge", "Q/K/V", "NOT REPRODUCED", map[string]*evaluate.Result{
			"random-qkv": madeResult("random-qkv", at(iv(1, 1, 1), iv(1.5, 1.4, 1.6)), nil),
			"random-qk":  madeResult("random-qk", at(iv(1, 1, 1), iv(2, 1.6, 2.4)), nil)}},
		{"value transport hurts", "Q/K/V", "NOT REPRODUCED", map[string]*evaluate.Result{
			"random-qkv": madeResult("random-qkv", at(iv(1, 1, 1), iv(3, 2.5, 3.5)), nil),
			"random-qk":  madeResult("random-qk", at(iv(1, 1, 1), iv(2, 1.6, 2.4)), nil)}},
		// 3. ALiBi within 1 +- 0.10 at the longest length (edges included).
		{"alibi flat", "ALiBi", "REPRODUCED", map[string]*evaluate.Result{"alibi": madeResult("alibi", at(iv(1, 1, 1), iv(0.96, 0.9, 1.0)), nil)}},
		{"alibi at the upper edge", "ALiBi", "REPRODUCED", map[string]*evaluate.Result{"alibi": madeResult("alibi", at(iv(1, 1, 1), iv(1.10, 1.0, 1.2)), nil)}},
		{"alibi at the lower edge", "ALiBi", "REPRODUCED", map[string]*evaluate.Result{"alibi": madeResult("alibi", at(iv(1, 1, 1), iv(0.90, 0.8, 1.0)), nil)}},
		{"alibi rises", "ALiBi", "NOT REPRODUCED", map[string]*evaluate.Result{"alibi": madeResult("alibi", at(iv(1, 1, 1), iv(1.11, 1.0, 1.2)), nil)}},
		{"alibi missing", "ALiBi", "NOT TESTED", map[string]*evaluate.Result{}},
		// 4. both learned variants <= 1.25 at 16T.
		{"learned flat", "learned token-dependent", "REPRODUCED", map[string]*evaluate.Result{
			"learned-qk":  madeResult("learned-qk", at(iv(1.25, 1.2, 1.3), iv(9, 9, 9)), nil),
			"learned-qkv": madeResult("learned-qkv", at(iv(1.1, 1.0, 1.2), iv(9, 9, 9)), nil)}},
		{"one learned degrades", "learned token-dependent", "NOT REPRODUCED", map[string]*evaluate.Result{
			"learned-qk":  madeResult("learned-qk", at(iv(1.26, 1.2, 1.3), iv(1, 1, 1)), nil),
			"learned-qkv": madeResult("learned-qkv", at(iv(1.1, 1.0, 1.2), iv(1, 1, 1)), nil)}},
		{"learned-qkv missing", "learned token-dependent", "NOT TESTED", map[string]*evaluate.Result{
			"learned-qk": madeResult("learned-qk", one, nil)}},
		// 5. random-qk degrades (interval above 1) and its far mass grows.
		{"rotation-only degrades", "eventually degrades", "REPRODUCED", map[string]*evaluate.Result{
			"random-qk": madeResult("random-qk", map[int]stats.Interval{1: iv(1, 1, 1), 2: iv(1, 1, 1), 128: iv(1.5, 1.01, 2)}, map[int]float64{2: 0.3, 128: 0.6})}},
		{"interval touches 1", "eventually degrades", "NOT REPRODUCED", map[string]*evaluate.Result{
			"random-qk": madeResult("random-qk", map[int]stats.Interval{1: iv(1, 1, 1), 2: iv(1, 1, 1), 128: iv(1.5, 1.0, 2)}, map[int]float64{2: 0.3, 128: 0.6})}},
		{"far mass flat", "eventually degrades", "NOT REPRODUCED", map[string]*evaluate.Result{
			"random-qk": madeResult("random-qk", map[int]stats.Interval{1: iv(1, 1, 1), 2: iv(1, 1, 1), 128: iv(1.5, 1.01, 2)}, map[int]float64{2: 0.3, 128: 0.3})}},
		{"no far mass measured", "eventually degrades", "NOT REPRODUCED", map[string]*evaluate.Result{
			"random-qk": madeResult("random-qk", map[int]stats.Interval{1: iv(1, 1, 1), 2: iv(1, 1, 1), 128: iv(1.5, 1.01, 2)}, nil)}},
		// 6. random-qkv-alibi within 1 +- 0.10 at the longest length and its
		// PPL at T at most 3% above random-qkv's (edges included).
		{"fix flat at the rotation's PPL", "far-mass control", "REPRODUCED", fix(iv(1.02, 0.95, 1.09), 10.1)},
		{"fix better than the rotation at T", "far-mass control", "REPRODUCED", fix(iv(0.97, 0.9, 1.05), 9)},
		{"fix ratio at the upper edge", "far-mass control", "REPRODUCED", fix(iv(1.10, 1.0, 1.2), 10)},
		{"fix ratio at the lower edge", "far-mass control", "REPRODUCED", fix(iv(0.90, 0.8, 1.0), 10)},
		{"fix ratio above", "far-mass control", "NOT REPRODUCED", fix(iv(1.11, 1.0, 1.2), 10)},
		{"fix ratio below", "far-mass control", "NOT REPRODUCED", fix(iv(0.89, 0.8, 1.0), 10)},
		{"fix PPL at the edge", "far-mass control", "REPRODUCED", fix(iv(1, 0.95, 1.05), 10.3)},
		{"fix PPL too high", "far-mass control", "NOT REPRODUCED", fix(iv(1, 0.95, 1.05), 10.31)},
		{"fix flat but at ALiBi's PPL", "far-mass control", "NOT REPRODUCED", fix(iv(1, 0.95, 1.05), 10.6)},
		{"fix missing", "far-mass control", "NOT TESTED", map[string]*evaluate.Result{
			"random-qkv": withPPLAtT(madeResult("random-qkv", one, nil), 10)}},
		{"rotation missing", "far-mass control", "NOT TESTED", map[string]*evaluate.Result{
			"random-qkv-alibi": withPPLAtT(madeResult("random-qkv-alibi", one, nil), 10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := verdictOf(t, tc.ev, tc.claim)
			if c.Verdict != tc.want {
				t.Fatalf("verdict %s, want %s (criterion: %s; evidence: %s)", c.Verdict, tc.want, c.Criterion, c.Evidence)
			}
			if c.Criterion == "" || c.Evidence == "" {
				t.Fatalf("claim without criterion or evidence: %+v", c)
			}
		})
	}
}

// A profile whose longest length is below a claim's says so in the evidence.
func TestClaimEvidenceNamesTheLength(t *testing.T) {
	ev := map[string]*evaluate.Result{"alibi": madeResult("alibi", map[int]stats.Interval{1: iv(1, 1, 1), 8: iv(1, 1, 1)}, nil)}
	c := verdictOf(t, ev, "ALiBi")
	if !strings.Contains(c.Evidence, "8T (this profile's longest; the claim is at 128T)") {
		t.Fatalf("evidence %q", c.Evidence)
	}
}

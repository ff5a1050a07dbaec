package report

import (
	"fmt"
	"strings"

	"routebench/stages/evaluate"
	"routebench/stats"
	"routebench/stats/decide"
)

// Claim v3x2 (issue 52), pre-registered in docs/statistics.md before its
// code and run: random-qk against RoPE extended at inference, each model's
// loss over L against its own *unscaled* loss over the same window's first
// T. v3x divided by the same pass's first T, which an extension whose scale
// s = L / T depends on L scores at scale s too: a handicapped baseline.

// V3X2Suffix marks the v3x2 claim's ID (a family of its own).
const V3X2Suffix = "-v3x2"

// unscaledRow is, per window at length L, A's log loss ratio against its
// own first T minus B's against its unscaled base's first T: rs = [A, B,
// base of B] (for an extension, plain rope: the weights at s = 1).
func unscaledRow(rs []*evaluate.Result, L int) ([]float64, error) {
	a, err := prefixRow(rs[:1], L)
	if err != nil {
		return nil, err
	}
	b, err := lengthOfL(rs[1], L)
	if err != nil {
		return nil, err
	}
	base, err := lengthOfL(rs[2], L)
	if err != nil {
		return nil, err
	}
	if len(base.PrefixLoss) == 0 {
		return nil, errFormat1(rs[2].Variant)
	}
	if len(b.WindowLoss) != len(base.PrefixLoss) {
		return nil, fmt.Errorf("%s scored %d windows at length %d and %s %d: v3x2 pairs the same windows (evaluate both on one design)", rs[1].Variant, len(b.WindowLoss), L, rs[2].Variant, len(base.PrefixLoss))
	}
	bd, err := stats.Differences(b.WindowLoss, base.PrefixLoss)
	if err != nil {
		return nil, err
	}
	return stats.Differences(a, bd)
}

// extension is the evaluate variant of RoPE extended by ext ("yarn").
func extension(ext string) string { return "rope+" + ext }

// claimsV3X2 judges v3x2 on the runs its registration reads.
func claimsV3X2(perSeed []map[string]*evaluate.Result, seeds []uint64) ([]Claim, []V3) {
	c, d := judgeRegistered(perSeed, seeds, V3X2Suffix, func(j v3Judge) []v3Spec {
		return []v3Spec{{"accumulated-beats-extended-rope", "accumulated transformations extrapolate better than RoPE extended at inference by YaRN, each against its own unscaled short context (v3x2)",
			"random-qk's loss ratio over L against its own first T, over rope+yarn's against plain rope's first T on the same window (paired per seed and window): upper end < 1 at 16T and at 128T",
			func() ([]v3Part, error) {
				return j.at16And128("random-qk / rope+yarn (unscaled bases)", []string{"random-qk", extension("yarn"), "rope"}, unscaledRow, 0, decide.Below)
			}}}
	})
	if len(d) == 1 {
		reg := registrationOf(V3X2Suffix)
		ps, _ := reg.selectSeeds(perSeed, seeds)
		d[0].Beside = "descriptive, not judged: " + unscaledBeside(v3Judge{ps}, []string{"pi", "ntk"})
	}
	return c, d
}

// unscaledBeside is the v3x2 statistic for random-qk against each RoPE
// extension in exts, at 16T and the longest length, on the runs j holds
// (an extension no run has is left out): figures shown, not judged.
func unscaledBeside(j v3Judge, exts []string) string {
	var out []string
	for _, ext := range exts {
		vs := []string{"random-qk", extension(ext), "rope"}
		if len(seedsWith(j.perSeed, vs...)) == 0 {
			continue
		}
		ps, err := j.at16And128("random-qk / "+extension(ext), vs, unscaledRow, 0, decide.Below)
		if err != nil {
			out = append(out, fmt.Sprintf("random-qk / %s: %v", extension(ext), err))
			continue
		}
		for _, p := range ps {
			out = append(out, fmt.Sprintf("%s %s (%s, %d seeds)", p.what, p.est.Exp(), p.est.Covers, len(p.y)))
		}
	}
	if len(out) == 0 {
		return "no run has random-qk, rope and a RoPE extension"
	}
	return strings.Join(out, "; ")
}

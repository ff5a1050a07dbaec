package report

import (
	"fmt"
	"math"
	"strings"

	"routebench/stages/evaluate"
)

// PaTH's claim rows (issue 14), written down with their criteria before
// any PaTH model was evaluated against them.
//
// "PaTH extrapolates like the SO(2) accumulated variants" asks whether the
// non-commuting Householder transport behaves as the commuting rotations
// do, so it is two-sided: PaTH's ratio at the longest length must lie in
// the range the SO(2) accumulated variants span there, widened by
// alikeMargin on each side; above it PaTH extrapolates worse, below it
// better, and either way not alike (the evidence says which side). The
// family is random-qk and random-qkv (required: the fixed-table SO(2)
// accumulation the theory's SO(2) steps are, without and with value
// transport, in every default set; PaTH transports Q/K only, so its
// like-for-like is random-qk, and random-qkv's value transport is part of
// the family's range), and learned-qk and learned-qkv when the profile
// evaluated them.
//
// "PaTH plus a forgetting gate stays within 1 +- 0.10 while keeping PaTH's
// PPL at T" is rotation-far-mass-control's criterion with path-fox for
// random-qkv-alibi and path for random-qkv: the same flat band
// (flatTolerance) and the same allowance for "keeps the PPL at T"
// (keepPPLTolerance), so the two far-mass controls are judged alike.

// alikeMargin widens the SO(2) family's ratio range on each side. 0.10 is
// the project's band for "the same as" a ratio (flatTolerance's 1 +- 0.10
// for flat): a family of two close ratios would otherwise be a target
// narrower than the window noise of one ratio (the smoke profile's
// bootstrap intervals are +-0.2 wide and more).
const alikeMargin = flatTolerance

// so2Family are the SO(2) accumulated variants the first claim compares
// PaTH with; the first so2Required must have been evaluated.
var so2Family = []string{"random-qk", "random-qkv", "learned-qk", "learned-qkv"}

const so2Required = 2

func pathClaims(ev map[string]*evaluate.Result) []Claim {
	var out []Claim
	c := Claim{ID: "path-like-so2", Claim: "PaTH (non-commuting Householder transport) extrapolates like the SO(2) accumulated variants",
		Criterion: fmt.Sprintf("path's ratio at the longest length within the range of the SO(2) accumulated variants' ratios there "+
			"(random-qk and random-qkv; learned-qk and learned-qkv when evaluated), widened by %.2f on each side: above it worse, below it better, either way not alike",
			alikeMargin)}
	p := ev["path"]
	var missing []string
	for _, v := range so2Family[:so2Required] {
		if ev[v] == nil {
			missing = append(missing, v)
		}
	}
	switch {
	case p == nil:
		out = append(out, notTested(c, "path"))
	case len(missing) > 0:
		out = append(out, notTested(c, strings.Join(missing, " and ")))
	default:
		l := Longest(p)
		lo, hi := math.Inf(1), math.Inf(-1)
		var each []string
		for _, v := range so2Family {
			r := ev[v]
			if r == nil {
				continue
			}
			x := Longest(r).Ratio.Value
			lo, hi = math.Min(lo, x), math.Max(hi, x)
			each = append(each, fmt.Sprintf("%s %.3f", v, x))
		}
		x := l.Ratio.Value
		side := "inside"
		switch {
		case !atLeast(x, lo-alikeMargin):
			side = "below: better than the family"
		case !atMost(x, hi+alikeMargin):
			side = "above: worse than the family"
		}
		c.Verdict = verdict(side == "inside")
		c.Evidence = fmt.Sprintf("at %s: path %s; SO(2) family %s: range [%.3f, %.3f], widened [%.3f, %.3f]; %s",
			atNote(l, paperLong), l.Ratio, strings.Join(each, ", "), lo, hi, lo-alikeMargin, hi+alikeMargin, side)
		out = append(out, c)
	}

	out = append(out, farMassControl(ev, "path-far-mass-control", "PaTH plus FoX's forgetting gate (path-fox, a learned decay of far logits) "+
		"stays within "+flatText+" at the longest length while keeping PaTH's PPL at T", "path-fox", "path"))
	return out
}

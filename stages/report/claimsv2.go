package report

import (
	"fmt"
	"math"
	"strings"

	"routebench/stages/evaluate"
	"routebench/stats"
)

// Claims v2 (issue 21), pre-registered in docs/statistics.md before any
// run was judged by them: every criterion reads the paired prefix ratio
// (a window's loss over its L positions against the same window's first
// T), compares intervals, not point values, wherever the criterion is a
// comparison ("flat" is one-sided: getting better with context is flat or
// better), judges "A beats B" on per-window differences of the same
// windows, and judges the learned rotation at the longest length as well
// as at 16T. The v1 rows (claims.go) stay beside them, labelled.
//
// Over seeds a single variant's figure is the geometric mean of its
// per-seed prefix ratios with the log-scale t-interval
// (stats.GeoOverSeeds), a paired comparison the t over seeds of per-seed
// paired means (stats.PairedOverSeeds); one seed: the window bootstrap.

// V2Suffix marks a v2 claim's ID: the v1 ID it revises plus "-v2".
const V2Suffix = "-v2"

// flatLimitV2 is the one-sided "flat" edge: the prefix ratio's upper
// interval end at most 1 + flatTolerance (v1's band, its lower side gone).
const flatLimitV2 = 1 + flatTolerance

// seedsWith lists the seeds (indices into perSeed) at which every variant
// of vs has results: a claim is judged on the seeds all its variants share
// (a profile may train some variants at one seed only: seed_variants).
func seedsWith(perSeed []map[string]*evaluate.Result, vs ...string) []int {
	var idx []int
	for i, ev := range perSeed {
		all := true
		for _, v := range vs {
			if ev[v] == nil {
				all = false
				break
			}
		}
		if all {
			idx = append(idx, i)
		}
	}
	return idx
}

// seedRuns is variant v's results at the seeds idx, nil unless it has each.
func seedRuns(perSeed []map[string]*evaluate.Result, v string, idx []int) []*evaluate.Result {
	var out []*evaluate.Result
	for _, i := range idx {
		r := perSeed[i][v]
		if r == nil {
			return nil
		}
		out = append(out, r)
	}
	return out
}

// lengthIndex is the index of the length a claim reads: LengthAtMost(m),
// or the longest for m <= 0.
func lengthIndex(r *evaluate.Result, m int) int {
	if m <= 0 {
		return len(r.Lengths) - 1
	}
	k := -1
	for i, l := range r.Lengths {
		if l.Multiplier <= m {
			k = i
		}
	}
	return k
}

// errFormat1 says why a v2 claim cannot read results without prefix losses.
func errFormat1(v string) error {
	return fmt.Errorf("%s's eval.json is format 1 (no prefix losses); rerun its evaluate stage", v)
}

// prefixOver is a variant's prefix ratio at a length over seeds.
func prefixOver(v string, runs []*evaluate.Result, m int) (stats.Spread, evaluate.LengthResult, error) {
	var x []float64
	var first evaluate.LengthResult
	for s, r := range runs {
		k := lengthIndex(r, m)
		if k < 0 || r.Lengths[k].PrefixRatio == nil {
			return stats.Spread{}, first, errFormat1(v)
		}
		if s == 0 {
			first = r.Lengths[k]
		}
		x = append(x, r.Lengths[k].PrefixRatio.Value)
	}
	if len(runs) == 1 {
		p := first.PrefixRatio
		return stats.Spread{N: 1, Mean: p.Value, Lo: p.Lo, Hi: p.Hi}, first, nil
	}
	return stats.GeoOverSeeds(x), first, nil
}

// perWindow picks what a paired comparison compares from one length's
// result: one log value per window.
type perWindow func(l evaluate.LengthResult) []float64

// logPrefix is each window's log prefix ratio: loss over L minus over its first T.
func logPrefix(l evaluate.LengthResult) []float64 {
	d, err := stats.Differences(l.WindowLoss, l.PrefixLoss)
	if err != nil {
		return nil
	}
	return d
}

// windowLoss is each window's mean loss (log PPL of the window).
func windowLoss(l evaluate.LengthResult) []float64 { return l.WindowLoss }

// pairedOver compares variant a with b, window by window, at a length
// over seeds: exp(mean of a's minus b's per-window values), the interval
// stats.PairedOverSeeds's. The windows must be the same: one evaluation
// seed and one evaluation set.
func pairedOver(a, b string, ra, rb []*evaluate.Result, m int, pick perWindow) (stats.Spread, error) {
	var per [][]float64
	for s := range ra {
		x, y := ra[s], rb[s]
		if x.Protocol.Seed != y.Protocol.Seed || x.Corpus != y.Corpus || x.Source != y.Source {
			return stats.Spread{}, fmt.Errorf("%s and %s were evaluated on different windows (seed %d vs %d, set %q vs %q); pair only results of one profile's evaluation",
				a, b, x.Protocol.Seed, y.Protocol.Seed, x.Source, y.Source)
		}
		ka, kb := lengthIndex(x, m), lengthIndex(y, m)
		if ka < 0 || kb < 0 || x.Lengths[ka].L != y.Lengths[kb].L {
			return stats.Spread{}, fmt.Errorf("%s and %s have no common length at %dT", a, b, m)
		}
		pa, pb := pick(x.Lengths[ka]), pick(y.Lengths[kb])
		if len(pa) == 0 {
			return stats.Spread{}, errFormat1(a)
		}
		if len(pb) == 0 {
			return stats.Spread{}, errFormat1(b)
		}
		d, err := stats.Differences(pa, pb)
		if err != nil {
			return stats.Spread{}, fmt.Errorf("%s vs %s at L=%d: %w", a, b, x.Lengths[ka].L, err)
		}
		per = append(per, d)
	}
	return stats.PairedOverSeeds(per)
}

// below reports an interval entirely below x; atMostHi its upper end <= x.
func below(s stats.Spread, x float64) bool    { return s.Hi < x }
func above(s stats.Spread, x float64) bool    { return s.Lo > x }
func atMostHi(s stats.Spread, x float64) bool { return atMost(s.Hi, x) }

func spreadString(s stats.Spread) string { return s.Interval().String() }

// ClaimsV2 judges the v2 claims over seeds (perSeed[i]: seed i's results
// by variant; one entry for one seed). Fields Effect, Ratios and Power are
// filled; SeedsAlone is ClaimsOverSeeds's.
func ClaimsV2(perSeed []map[string]*evaluate.Result) []Claim {
	j := v2Judge{perSeed: perSeed}
	out := []Claim{j.beats("accumulated-beats-rope", "accumulated (random) rotation extrapolates better than RoPE at 16x the training length", "random-qk", "rope", 16),
		j.beats("value-transport", "rotating values too (Q/K/V) beats Q/K-only rotation at 128x", "random-qkv", "random-qk", 0),
		j.flat("alibi-flat", "ALiBi stays flat (or better) to 128x", []string{"alibi"}, []int{0}),
		j.flat("learned-flat", "learned token-dependent rotation keeps train-length perplexity far beyond the training length (at 16T and at the longest length)",
			[]string{"learned-qk", "learned-qkv"}, []int{16, 0}),
		j.degrades(),
		j.control("rotation-far-mass-control", "rotation plus an explicit far-mass control (random-qkv-alibi) stays flat or better at the longest length while keeping the rotation's PPL at T",
			"random-qkv-alibi", "random-qkv"),
		j.pathLike(),
		j.control("path-far-mass-control", "PaTH plus FoX's forgetting gate (path-fox) stays flat or better at the longest length while keeping PaTH's PPL at T", "path-fox", "path"),
	}
	for k := range out {
		out[k].ID += V2Suffix
		out[k].Version = "v2"
	}
	return out
}

type v2Judge struct{ perSeed []map[string]*evaluate.Result }

// runs returns each variant's runs at the seeds they all have (in one
// order, so that seed s of one pairs with seed s of another), or the claim
// marked NOT TESTED.
func (j v2Judge) runs(c *Claim, vs ...string) ([][]*evaluate.Result, bool) {
	idx := seedsWith(j.perSeed, vs...)
	if len(idx) == 0 {
		var missing []string
		for _, v := range vs {
			if len(seedsWith(j.perSeed, v)) == 0 {
				missing = append(missing, v)
			}
		}
		if len(missing) == 0 { // each has a run, but no seed has them all
			missing = []string{"a seed shared by " + strings.Join(vs, ", ")}
		}
		*c = notTested(*c, strings.Join(missing, " or "))
		return nil, false
	}
	var out [][]*evaluate.Result
	for _, v := range vs {
		out = append(out, seedRuns(j.perSeed, v, idx))
	}
	return out, true
}

// fail marks a claim that cannot be judged on these results.
func fail(c Claim, err error) Claim {
	c.Verdict, c.Evidence = "NOT TESTED", err.Error()
	return c
}

// ratiosOf is both ratios of variant v's first seed... over seeds: the
// paper ratio's and the prefix ratio's geometric means with their intervals.
func ratiosOf(v string, runs []*evaluate.Result, m int) string {
	var paper []float64
	for _, r := range runs {
		paper = append(paper, r.Lengths[lengthIndex(r, m)].Ratio.Value)
	}
	p := runs[0].Lengths[lengthIndex(runs[0], m)]
	ps := stats.Spread{N: 1, Mean: p.Ratio.Value, Lo: p.Ratio.Lo, Hi: p.Ratio.Hi}
	if len(runs) > 1 {
		ps = stats.GeoOverSeeds(paper)
	}
	pre := "-"
	if s, _, err := prefixOver(v, runs, m); err == nil {
		pre = spreadString(s)
	}
	return fmt.Sprintf("%s at %dT: paper %s, prefix %s", v, p.Multiplier, spreadString(ps), pre)
}

func (j v2Judge) beats(id, claim, a, b string, m int) Claim {
	where := "the longest length"
	if m > 0 {
		where = fmt.Sprintf("%dT", m)
	}
	c := Claim{ID: id, Claim: claim, Criterion: fmt.Sprintf("at %s, the paired interval of %s's prefix ratio over %s's (per-window differences, same windows) lies entirely below 1", where, a, b)}
	rs, ok := j.runs(&c, a, b)
	if !ok {
		return c
	}
	s, err := pairedOver(a, b, rs[0], rs[1], m, logPrefix)
	if err != nil {
		return fail(c, err)
	}
	c.Verdict = verdict(below(s, 1))
	c.Effect, c.Threshold = ptr(s.Interval()), 1
	c.Evidence = fmt.Sprintf("%s / %s prefix ratio %s", a, b, spreadString(s))
	c.Ratios = ratiosOf(a, rs[0], m) + "; " + ratiosOf(b, rs[1], m)
	c.Power = power(s, 1, rs[0], m)
	return c
}

func (j v2Judge) flat(id, claim string, vs []string, ms []int) Claim {
	var at []string
	for _, m := range ms {
		if m > 0 {
			at = append(at, fmt.Sprintf("%dT", m))
		} else {
			at = append(at, "the longest length")
		}
	}
	c := Claim{ID: id, Claim: claim, Criterion: fmt.Sprintf("%s's prefix-ratio interval has its upper end <= %.2f at %s (one-sided: better with context is flat)",
		strings.Join(vs, "'s and "), flatLimitV2, strings.Join(at, " and at "))}
	rs, ok := j.runs(&c, vs...)
	if !ok {
		return c
	}
	okAll := true
	var worst stats.Spread
	var worstRuns []*evaluate.Result
	var worstM int
	var ev, ratios []string
	for i, v := range vs {
		seen := map[int]bool{} // a profile whose longest length is <= 16T reads one length twice
		for _, m := range ms {
			k := lengthIndex(rs[i][0], m)
			if seen[k] {
				continue
			}
			seen[k] = true
			s, l, err := prefixOver(v, rs[i], m)
			if err != nil {
				return fail(c, err)
			}
			okAll = okAll && atMostHi(s, flatLimitV2)
			if worstRuns == nil || s.Hi > worst.Hi || math.IsNaN(s.Hi) {
				worst, worstRuns, worstM = s, rs[i], m
			}
			ev = append(ev, fmt.Sprintf("%s at %dT %s", v, l.Multiplier, spreadString(s)))
			ratios = append(ratios, ratiosOf(v, rs[i], m))
		}
	}
	c.Verdict = verdict(okAll)
	c.Effect, c.Threshold = ptr(worst.Interval()), flatLimitV2
	c.Evidence = "prefix ratio: " + strings.Join(ev, ", ")
	c.Ratios = strings.Join(ratios, "; ")
	c.Power = power(worst, flatLimitV2, worstRuns, worstM)
	return c
}

// farGrowth is the mean over seeds of the far mass beyond T at the longest
// length minus at 2T, and the two means.
func farGrowth(runs []*evaluate.Result) (growth, at2, atLong float64, ok bool) {
	for _, r := range runs {
		f2, ok2 := farMassAt(r, 2)
		fl, okl := farAt(Longest(r).FarMass, r.Protocol.Context)
		if !ok2 || !okl || fl.Heads == 0 {
			return 0, 0, 0, false
		}
		at2 += f2 / float64(len(runs))
		atLong += fl.Mean / float64(len(runs))
	}
	return atLong - at2, at2, atLong, true
}

func (j v2Judge) degrades() Claim {
	c := Claim{ID: "rotation-only-degrades", Claim: "rotation-only attention eventually degrades, as its far attention mass grows with length (more than ALiBi's)",
		Criterion: "random-qk's prefix-ratio interval at the longest length lies above 1, and its far mass beyond T grows from 2T to the longest length by more than alibi's (whose far mass grows too)"}
	rs, ok := j.runs(&c, "random-qk", "alibi")
	if !ok {
		return c
	}
	s, _, err := prefixOver("random-qk", rs[0], 0)
	if err != nil {
		return fail(c, err)
	}
	gq, q2, qL, okq := farGrowth(rs[0])
	ga, a2, aL, oka := farGrowth(rs[1])
	c.Verdict = verdict(above(s, 1) && okq && oka && gq > ga)
	c.Effect, c.Threshold = ptr(s.Interval()), 1
	c.Evidence = fmt.Sprintf("random-qk prefix ratio %s; far mass beyond T from 2T to the longest: random-qk %.3f -> %.3f (%+.3f), alibi %.3f -> %.3f (%+.3f)",
		spreadString(s), q2, qL, gq, a2, aL, ga)
	c.Ratios = ratiosOf("random-qk", rs[0], 0) + "; " + ratiosOf("alibi", rs[1], 0)
	c.Power = power(s, 1, rs[0], 0)
	return c
}

func (j v2Judge) control(id, claim, controlled, base string) Claim {
	c := Claim{ID: id, Claim: claim, Criterion: fmt.Sprintf("%s's prefix-ratio interval at the longest length has its upper end <= %.2f, and the paired interval of its PPL at T over %s's (same windows) has its upper end <= %.2f",
		controlled, flatLimitV2, base, 1+keepPPLTolerance)}
	rs, ok := j.runs(&c, controlled, base)
	if !ok {
		return c
	}
	s, _, err := prefixOver(controlled, rs[0], 0)
	if err != nil {
		return fail(c, err)
	}
	p, err := pairedOver(controlled, base, rs[0], rs[1], 1, windowLoss)
	if err != nil {
		return fail(c, err)
	}
	c.Verdict = verdict(atMostHi(s, flatLimitV2) && atMostHi(p, 1+keepPPLTolerance))
	c.Effect, c.Threshold = ptr(s.Interval()), flatLimitV2
	c.Evidence = fmt.Sprintf("%s prefix ratio %s; PPL at T, %s / %s (paired) %s", controlled, spreadString(s), controlled, base, spreadString(p))
	c.Ratios = ratiosOf(controlled, rs[0], 0)
	c.Power = "flat: " + power(s, flatLimitV2, rs[0], 0) + "; PPL at T: " + power(p, 1+keepPPLTolerance, rs[0], 1)
	return c
}

func (j v2Judge) pathLike() Claim {
	c := Claim{ID: "path-like-so2", Claim: "PaTH (non-commuting Householder transport) extrapolates like the SO(2) accumulated variants",
		Criterion: fmt.Sprintf("path's prefix ratio at the longest length within the range of the SO(2) accumulated variants' prefix ratios there, widened by %.2f on each side (two-sided: alike; point values, intervals shown)", alikeMargin)}
	rs, ok := j.runs(&c, append([]string{"path"}, so2Family[:so2Required]...)...)
	if !ok {
		return c
	}
	s, _, err := prefixOver("path", rs[0], 0)
	if err != nil {
		return fail(c, err)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var each []string
	for _, v := range so2Family {
		r := seedRuns(j.perSeed, v, seedsWith(j.perSeed, "path", v)) // on path's seeds
		if r == nil {
			continue
		}
		f, _, err := prefixOver(v, r, 0)
		if err != nil {
			return fail(c, err)
		}
		lo, hi = math.Min(lo, f.Mean), math.Max(hi, f.Mean)
		each = append(each, fmt.Sprintf("%s %.3f", v, f.Mean))
	}
	x := s.Mean
	c.Verdict = verdict(atLeast(x, lo-alikeMargin) && atMost(x, hi+alikeMargin))
	c.Effect, c.Threshold = ptr(s.Interval()), math.NaN()
	c.Evidence = fmt.Sprintf("path prefix ratio %s; SO(2) family %s: widened range [%.3f, %.3f]", spreadString(s), strings.Join(each, ", "), lo-alikeMargin, hi+alikeMargin)
	c.Ratios = ratiosOf("path", rs[0], 0)
	c.Power = "a point criterion (range), no interval edge"
	return c
}

func ptr(i stats.Interval) *stats.Interval { return &i }

// power says the smallest effect the interval's seeds (or, with one seed,
// windows) detect with 80% power, and when the interval straddles thr how
// many would (docs/statistics.md, Power); m is the multiplier the
// interval was read at (0: the longest), whose window count a one-seed
// interval came from.
func power(s stats.Spread, thr float64, runs []*evaluate.Result, m int) string {
	if math.IsNaN(s.Lo) || math.IsNaN(s.Hi) || s.Mean <= 0 || s.Lo <= 0 {
		return "-"
	}
	dist := math.Abs(math.Log(s.Mean) - math.Log(thr))
	pct := 100 * stats.PowerTarget
	if s.N >= 2 {
		d := stats.DetectableLogEffect(s.SD, s.N)
		out := fmt.Sprintf("detectable at %.0f%% power with %d seeds (seeds | windows): x%.3f", pct, s.N, math.Exp(d))
		if s.Lo < thr && thr < s.Hi {
			n := stats.SeedsToSettle(s.SD, dist)
			if n > stats.MaxSeeds {
				out += fmt.Sprintf("; straddles %.2f: more than %d seeds for %.0f%% power", thr, stats.MaxSeeds, pct)
			} else {
				out += fmt.Sprintf("; straddles %.2f: ~%d seeds for %.0f%% power", thr, n, pct)
			}
		}
		return out
	}
	k := lengthIndex(runs[0], m)
	W := len(runs[0].Lengths[k].WindowLoss)
	h := (math.Log(s.Hi) - math.Log(s.Lo)) / 2
	sd := h * math.Sqrt(float64(W)) / stats.TQuantile(W)
	out := fmt.Sprintf("detectable at %.0f%% power with 1 seed and %d windows: x%.3f", pct, W, math.Exp(stats.DetectableLogEffect(sd, W)))
	if s.Lo < thr && thr < s.Hi {
		if dist == 0 {
			out += fmt.Sprintf("; straddles %.2f at its centre: no number of windows settles it", thr)
		} else {
			out += fmt.Sprintf("; straddles %.2f: ~%d windows at %dT (now %d) for %.0f%% power", thr, stats.WindowsToSettle(h, dist, W), runs[0].Lengths[k].Multiplier, W, pct)
		}
	}
	return out
}

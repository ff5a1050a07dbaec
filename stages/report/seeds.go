package report

import (
	"fmt"
	"math"
	"strings"

	"routebench/stages/evaluate"
	"routebench/stats"
)

// Training seeds. A profile's seeds field trains each variant once per
// seed; every figure then has two spreads: the window t interval of
// one trained model (evaluate's), and the spread over seeds, i.e. over
// training noise (the weights' and the random angle table's draws), given
// the same evaluation windows (the windows are the same for every model).
// They combine as OverSeeds says: the per-seed point estimates are
// averaged, and the interval is a Student-t interval over seeds; the
// per-seed window intervals are reported beside it, not folded in.
// Perplexities and their ratios are positive and scale multiplicatively,
// so they combine on the log scale (stats.GeoOverSeeds): the geometric mean with
// the t-interval of the logs, mapped back, which never reaches below 0 as
// the linear interval of 2 or 3 seeds can.

// SeedSuffix is the one home of a seeded run's name: a variant trained
// with the profile's own seed (train.seed) keeps its plain stage names
// ("train/rope"), so that a profile without seeds keeps its names and keys;
// any other seed is suffixed ("train/rope@seed2").
func SeedSuffix(seed, defaultSeed uint64) string {
	if seed == defaultSeed {
		return ""
	}
	return fmt.Sprintf("@seed%d", seed)
}

// CombineSeeds is one variant's results over seeds as one Result: each
// length's PPL and ratio are the geometric mean over seeds with the
// log-scale t-interval over seeds (stats.GeoOverSeeds, in place of the bootstrap
// interval), the far masses, entropy and
// bucket losses are means over seeds (the per-head range the widest over
// seeds); window losses are dropped (they belong to one model). One run is
// returned as it is. The runs must share one protocol (lengths and
// windows): they are one variant's evaluate stages at other seeds.
func CombineSeeds(runs []*evaluate.Result) (*evaluate.Result, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("report: no runs to combine over seeds")
	}
	if len(runs) == 1 {
		return runs[0], nil
	}
	first := runs[0]
	out := *first
	out.Lengths = make([]evaluate.LengthResult, len(first.Lengths))
	for i, l := range first.Lengths {
		var ppl, ratio, entropy []float64
		for _, r := range runs {
			if len(r.Lengths) != len(first.Lengths) || r.Lengths[i].L != l.L {
				return nil, fmt.Errorf("report: %s's seeds were evaluated at different lengths (%s vs %s); they must share the profile's protocol",
					first.Variant, lengthList(first), lengthList(r))
			}
			ppl = append(ppl, r.Lengths[i].PPL.Value)
			ratio = append(ratio, r.Lengths[i].Ratio.Value)
			entropy = append(entropy, r.Lengths[i].Entropy)
		}
		c := l
		c.PPL, c.Ratio = stats.GeoOverSeeds(ppl).Interval(), stats.GeoOverSeeds(ratio).Interval()
		c.PrefixRatio, c.PrefixLoss = nil, nil
		var prefix []float64
		for _, r := range runs {
			if p := r.Lengths[i].PrefixRatio; p != nil {
				prefix = append(prefix, p.Value)
			}
		}
		if len(prefix) == len(runs) {
			c.PrefixRatio = ptr(stats.GeoOverSeeds(prefix).Interval())
		}
		c.Entropy = stats.OverSeeds(entropy).Mean
		c.WindowLoss = nil
		c.StepGaps = nil // one model's steps; RESULTS.md lists them per run (pathgap.go)
		c.Buckets = append([]evaluate.Bucket(nil), l.Buckets...)
		for b := range c.Buckets {
			var loss []float64
			for _, r := range runs {
				if b < len(r.Lengths[i].Buckets) {
					loss = append(loss, r.Lengths[i].Buckets[b].Loss)
				}
			}
			c.Buckets[b].Loss = stats.OverSeeds(loss).Mean
		}
		c.FarMass = append([]evaluate.FarMass(nil), l.FarMass...)
		for f := range c.FarMass {
			var mean, p50, p95 []float64
			for _, r := range runs {
				fm, ok := farAt(r.Lengths[i].FarMass, c.FarMass[f].Distance)
				if !ok {
					continue
				}
				mean, p50, p95 = append(mean, fm.Mean), append(p50, fm.P50), append(p95, fm.P95)
				c.FarMass[f].HeadMin = math.Min(c.FarMass[f].HeadMin, fm.HeadMin)
				c.FarMass[f].HeadMax = math.Max(c.FarMass[f].HeadMax, fm.HeadMax)
			}
			c.FarMass[f].Mean, c.FarMass[f].P50, c.FarMass[f].P95 = stats.OverSeeds(mean).Mean, stats.OverSeeds(p50).Mean, stats.OverSeeds(p95).Mean
		}
		out.Lengths[i] = c
	}
	return &out, nil
}

func lengthList(r *evaluate.Result) string {
	var ls []string
	for _, l := range r.Lengths {
		ls = append(ls, fmt.Sprint(l.L))
	}
	return strings.Join(ls, ",")
}

// ClaimsOverSeeds judges the claims over seeds: the v1 rows, then the v2
// rows. perSeed holds each seed's results by variant (seed i of every
// variant in perSeed[i]). A v1 claim's verdict is its verdict on the
// seeds' geometric means (CombineSeeds: the intervals the criteria compare
// are then the t-intervals over seeds), and its evidence adds how many
// seeds reproduce it on their own (with their window t intervals). A v2
// claim is judged by ClaimsV2 on all seeds at once (its paired statistics
// need each seed's windows), and SeedsAlone counts the seeds whose own v2
// verdict is REPRODUCED. With one seed this is Claims.
func ClaimsOverSeeds(perSeed []map[string]*evaluate.Result, seeds []uint64) ([]Claim, error) {
	v1, err := claimsV1OverSeeds(perSeed, seeds)
	if err != nil {
		return nil, err
	}
	v2 := ClaimsV2(perSeed)
	if len(perSeed) > 1 {
		per := make([][]Claim, len(perSeed))
		for i, ev := range perSeed {
			per[i] = ClaimsV2([]map[string]*evaluate.Result{ev})
		}
		for k := range v2 {
			c := &v2[k]
			if c.Verdict == "NOT TESTED" {
				continue
			}
			n, tested := seedsReproducing(per, k)
			c.Criterion = seedCount(tested, len(perSeed), "geometric means, %.0f%% log-scale t-intervals over seeds") + ": " + c.Criterion
			c.SeedsAlone = fmt.Sprintf("%d of %d", n, tested)
		}
	} else {
		for k := range v2 {
			if v2[k].Verdict != "NOT TESTED" {
				v2[k].SeedsAlone = map[bool]string{true: "1 of 1", false: "0 of 1"}[v2[k].Verdict == "REPRODUCED"]
			}
		}
	}
	return append(v1, v2...), nil
}

// seedCount says how many seeds a claim was judged on and how they
// combine (how: a format with one %f, the confidence in percent): all of
// them, or the ones its variants share when some variants have fewer
// (seed_variants); on one seed the intervals are the window t's.
func seedCount(tested, all int, how string) string {
	how = fmt.Sprintf(how, 100*stats.Confidence)
	switch {
	case tested == all:
		return fmt.Sprintf("over %d seeds (%s)", all, how)
	case tested == 1:
		return fmt.Sprintf("on the 1 seed of %d its variants share (%.0f%% window t intervals)", all, 100*stats.Confidence)
	default:
		return fmt.Sprintf("over the %d seeds of %d its variants share (%s)", tested, all, how)
	}
}

// claimsV1OverSeeds is the v1 rows over seeds: the criterion on the
// seeds' geometric means (CombineSeeds; a variant trained at fewer seeds
// combines the ones it has), and how many seeds reproduce it.
func claimsV1OverSeeds(perSeed []map[string]*evaluate.Result, seeds []uint64) ([]Claim, error) {
	if len(perSeed) == 1 {
		return ClaimsV1(perSeed[0]), nil
	}
	byVariant := map[string][]*evaluate.Result{}
	for _, ev := range perSeed {
		for v, r := range ev {
			byVariant[v] = append(byVariant[v], r)
		}
	}
	combined := map[string]*evaluate.Result{}
	for v, rs := range byVariant {
		c, err := CombineSeeds(rs)
		if err != nil {
			return nil, err
		}
		combined[v] = c
	}
	claims := ClaimsV1(combined)
	per := make([][]Claim, len(perSeed))
	for i, ev := range perSeed {
		per[i] = ClaimsV1(ev)
	}
	for k := range claims {
		c := &claims[k]
		if c.Verdict == "NOT TESTED" {
			continue
		}
		n, tested := seedsReproducing(per, k)
		each := []string{}
		for i := range per {
			if per[i][k].Verdict != "NOT TESTED" {
				each = append(each, fmt.Sprintf("seed %d %s", seeds[i], per[i][k].Verdict))
			}
		}
		c.Criterion = seedCount(tested, len(perSeed), "on the seeds' geometric means with %.0f%% log-scale t-intervals") + ": " + c.Criterion
		what := "geometric seed mean" // on one shared seed, that seed's own figures
		if tested == 1 {
			what = "one seed"
		}
		c.Evidence = fmt.Sprintf("%s %s; %d of %d seeds reproduce it alone (%s)", what, c.Evidence, n, tested, strings.Join(each, ", "))
		c.SeedsAlone = fmt.Sprintf("%d of %d", n, tested)
	}
	return claims, nil
}

// seedsReproducing counts the seeds whose own claim k is REPRODUCED, and
// the seeds at which it was tested at all (per: each seed's claims, in one
// order; a seed lacking one of the claim's variants does not test it).
func seedsReproducing(per [][]Claim, k int) (reproduced, tested int) {
	for i := range per {
		switch per[i][k].Verdict {
		case "REPRODUCED":
			reproduced++
			tested++
		case "NOT TESTED":
		default:
			tested++
		}
	}
	return reproduced, tested
}

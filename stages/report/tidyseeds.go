package report

import (
	"math"
	"strings"

	"routebench/stats"
)

// acrossSeeds is the LevelAll rows: for every seed-level figure of a
// variant (one point, corpus, protocol, length, metric and parameters),
// its value over the variant's training seeds, as RESULTS.md and the
// claims combine seeds (CombineSeeds, ClaimsOverSeeds): perplexities,
// their ratios and the route window n* (positive, multiplicative) by the
// geometric mean with stats.GeoOverSeeds's log-scale t interval, every
// other figure by the mean with stats.OverSeeds's t interval. Every seed
// is evaluated on the same windows, so the interval is training noise
// given those windows. A variant with one seed has its seed's figure and
// interval as its LevelAll row, as the report does; an n* that one seed
// did not find (-1) leaves the combined n* at -1, without an interval.
// The rows come in the order their figures first appear.
func acrossSeeds(rs []tidyRow) []tidyRow {
	type key struct {
		point, variant, corpus, protocol, metric string
		T, L, distance, posStart, posEnd, gap    int
	}
	var order []key
	groups := map[key][]tidyRow{}
	for _, r := range rs {
		if r.Level != LevelSeed {
			continue
		}
		k := key{r.Point, r.Variant, r.Corpus, r.Protocol, r.Metric, r.T, r.L, r.Distance, r.PosStart, r.PosEnd, r.Gap}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := make([]tidyRow, 0, len(order))
	for _, k := range order {
		out = append(out, combineSeedRows(groups[k]))
	}
	return out
}

// logScale says which metrics combine over seeds on the log scale.
func logScale(metric string) bool {
	switch metric {
	case "ppl", "ratio", "prefix_ratio":
		return true
	}
	return strings.HasPrefix(metric, "route_window_")
}

// combineSeedRows is one LevelAll row from a figure's seed rows.
func combineSeedRows(g []tidyRow) tidyRow {
	r := g[0]
	r.Level, r.Seed, r.Seeds = LevelAll, 0, len(g)
	if len(g) == 1 {
		return r
	}
	x := make([]float64, len(g))
	censored := false
	for i, s := range g {
		x[i] = s.Value
		censored = censored || s.Value < 0
	}
	r.Lo, r.Hi, r.Interval = math.NaN(), math.NaN(), ""
	var s stats.Spread
	switch {
	case logScale(r.Metric) && censored:
		r.Value = -1
		return r
	case logScale(r.Metric):
		s, r.Interval = stats.GeoOverSeeds(x), ivSeedsLog
	default:
		s, r.Interval = stats.OverSeeds(x), ivSeeds
	}
	r.Value, r.Lo, r.Hi = s.Mean, s.Lo, s.Hi
	return r
}

package study

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"routebench/stages/report"
)

// renderMixing lists each point's route mixing window n* (the median over
// layers, heads and frequency pairs; eval.json route_mixing) by length,
// with the range over seeds: the mixing study (sweeps/mixing.json) reads
// it to ask whether n* depends on the training length T. Nothing when no
// run measured it (it needs the prefixes window design).
func renderMixing(b *strings.Builder, pts []pointSummary) {
	type cell struct{ med []float64 }
	var rows []string
	for _, pt := range pts {
		for _, v := range pt.variants {
			var lengths []int
			byL := map[int]*cell{}
			T := 0
			for _, r := range v.runs {
				if r.eval == nil || r.eval.Mixing == nil {
					continue
				}
				T = r.eval.Protocol.Context
				for _, l := range r.eval.Mixing.Lengths {
					c := byL[l.L]
					if c == nil {
						c = &cell{}
						byL[l.L] = c
						lengths = append(lengths, l.L)
					}
					c.med = append(c.med, l.Window.Median)
				}
			}
			if len(lengths) == 0 {
				continue
			}
			slices.Sort(lengths)
			var cells []string
			for _, L := range lengths {
				cells = append(cells, fmt.Sprintf("%d (%dT): %s", L, L/T, windowRange(byL[L].med)))
			}
			rows = append(rows, fmt.Sprintf("| `%s` | %s | %d | %s |", pt.Label, v.variant, T, strings.Join(cells, "; ")))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("## Route mixing window n*\n\n" +
		"The median over layers, heads and frequency pairs of n*, the first route length after which the route correlation c(n) stays below 0.1, " +
		"at each evaluated length L (routes inside the length-L prefix of the first 2 long windows; docs/evaluation.md). " +
		"One value per seed: the median over seeds [min .. max]; `> N` when the median window was not found by the longest route.\n\n" +
		"| point | variant | T | n* by length L |\n|---|---|---|---|\n")
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	b.WriteString("\n")
}

// windowRange is the median over seeds of their n* with the range
// (report.Spread); a censored value (-1) counts as infinite, above every
// found one, and reads as "> N".
func windowRange(xs []float64) string {
	v := make([]float64, len(xs))
	for k, x := range xs {
		v[k] = x
		if x < 0 {
			v[k] = math.Inf(1)
		}
	}
	return report.Spread(v, func(x float64) string {
		if math.IsInf(x, 1) {
			return "> N"
		}
		return fmt.Sprintf("%.0f", x)
	})
}

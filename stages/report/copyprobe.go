package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"routebench/stats"
)

// The copy probe (evaluate's CopyProbe, eval.json format 4): per variant
// and gap d, the mean copy gain. With 3 or more seeds the interval is a t
// interval over seeds of each seed's mean over its probes (the probes are
// the same strings and text for every model of a seed, and too few at
// the long gaps, 1 at the longest, for an interval over probes); with
// fewer seeds there is no interval, and the cell gives the range of the
// probes' gains instead.

// PlotCopyProbe is the copy probe's plot, relative to the output.
const PlotCopyProbe = "results/copy_gain.png"

// copySeedsForT is the fewest seeds for an interval over seeds.
const copySeedsForT = 3

// copyCell is one variant at one gap.
type copyCell struct {
	d, probes int // probes per seed
	seeds     int
	gain      stats.Estimate // the t interval over seeds (Covers "seeds"), or the mean with NaN bounds
	min, max  float64        // the range of the probes' gains (fewer than copySeedsForT seeds)
}

// copyRow is one variant's cells, in gap order.
type copyRow struct {
	variant string
	cells   []copyCell
}

// copyGains estimates every variant's gain at every gap; variants without
// a probe (before format 4, or an inference-time RoPE extension) are left
// out.
func copyGains(vs []*variantData) []copyRow {
	var out []copyRow
	for _, g := range byVariant(vs) {
		perGap := map[int][][]float64{} // d -> each seed's gains
		var ds []int
		for _, r := range g.evals {
			if r.Copy == nil {
				continue
			}
			for _, cg := range r.Copy.Gaps {
				if len(cg.Gain) == 0 {
					continue
				}
				if _, ok := perGap[cg.D]; !ok {
					ds = append(ds, cg.D)
				}
				perGap[cg.D] = append(perGap[cg.D], cg.Gain)
			}
		}
		slices.Sort(ds)
		row := copyRow{variant: g.variant}
		for _, d := range ds {
			runs := perGap[d]
			c := copyCell{d: d, probes: len(runs[0]), seeds: len(runs), min: math.Inf(1), max: math.Inf(-1)}
			var means, all []float64
			for _, gains := range runs {
				means = append(means, stats.Mean(gains))
				all = append(all, gains...)
				c.min, c.max = math.Min(c.min, slices.Min(gains)), math.Max(c.max, slices.Max(gains))
			}
			if len(runs) >= copySeedsForT {
				c.gain = stats.SeedsT(means)
				c.gain.Covers = "seeds"
			} else {
				c.gain = stats.Estimate{Mean: stats.Mean(all), SE: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
			}
			row.cells = append(row.cells, c)
		}
		if len(row.cells) > 0 {
			out = append(out, row)
		}
	}
	return out
}

// copyM is the string length of the first probe recorded (0: none).
func copyM(vs []*variantData) int {
	for _, v := range vs {
		if v.eval != nil && v.eval.Copy != nil {
			return v.eval.Copy.M
		}
	}
	return 0
}

// copyCellText is a cell: the mean with its interval over seeds, or the
// mean with the probes' range.
func copyCellText(c copyCell) string {
	if c.seeds >= copySeedsForT {
		return estimateText(c.gain)
	}
	return fmt.Sprintf("%.3f (%.3f to %.3f)", c.gain.Mean, c.min, c.max)
}

// renderCopyProbe writes the copy probe's table and links its plot.
func renderCopyProbe(b *strings.Builder, vs []*variantData) {
	rows, m := copyGains(vs), copyM(vs)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "### Copy probe\n\n"+
		"Zero-shot retrieval: a random string S of m = %d tokens, then d tokens of held-out text, then S again; "+
		"copy gain = mean loss over the first copy's tokens 2..m - mean loss over the second copy's tokens 2..m (nats per token; the first token of a copy is unpredictable in both). "+
		"A large gain: the model retrieves S from about d tokens back; 0: it does not. The probes of one gap share one forward pass; the column heads give d and the probes per seed. "+
		"Cells: the mean gain over seeds and probes, with the %s t interval over seeds (each seed's mean over its probes) where the variant has %d or more seeds, "+
		"otherwise the mean over its probes with their range in parentheses.\n\n", m, confidenceText, copySeedsForT)
	var cols []copyCell // every gap any variant has, in order
	for _, r := range rows {
		for _, c := range r.cells {
			if !slices.ContainsFunc(cols, func(x copyCell) bool { return x.d == c.d }) {
				cols = append(cols, c)
			}
		}
	}
	slices.SortFunc(cols, func(a, b copyCell) int { return a.d - b.d })
	b.WriteString("| variant | seeds |")
	for _, c := range cols {
		fmt.Fprintf(b, " d = %d (%d) |", c.d, c.probes)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %d seed%s |", r.variant, r.cells[0].seeds, plural(r.cells[0].seeds))
		for _, c := range cols {
			k := slices.IndexFunc(r.cells, func(x copyCell) bool { return x.d == c.d })
			if k < 0 {
				b.WriteString(" - |")
				continue
			}
			fmt.Fprintf(b, " %s |", copyCellText(r.cells[k]))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "\n![copy gain vs gap](%s)\n\n", PlotCopyProbe)
}

// copyProbePlot: the mean gain against d (log2) per variant, coloured by
// family; the bars are the interval over seeds, or the probes' range with
// fewer seeds.
func copyProbePlot(vs []*variantData, path string) error {
	rows := copyGains(vs)
	if len(rows) == 0 {
		return nil
	}
	series := familySeries(rows, func(r copyRow) string { return r.variant }, func(r copyRow, s *Series) {
		for _, c := range r.cells {
			lo, hi := c.gain.Lo, c.gain.Hi
			if c.seeds < copySeedsForT {
				lo, hi = c.min, c.max
			}
			s.X, s.Y = append(s.X, math.Log2(float64(c.d))), append(s.Y, c.gain.Mean)
			s.Lo, s.Hi = append(s.Lo, lo), append(s.Hi, hi)
		}
	})
	return IntervalPlot(path, "Copy probe: first-copy loss - second-copy loss", "gap d between the copies (tokens, log scale)", "copy gain (nats/token)", log2Ticks{}, series)
}

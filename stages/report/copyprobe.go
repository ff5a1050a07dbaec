package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"routebench/stats"
)

// The copy probe (evaluate's CopyProbe, eval.json format 4; its
// context-matched control from format 6): per variant and gap d, the mean
// controlled gain (the second copy's loss in the control pass, where its
// first copy was another string, minus its loss in the probe pass: the
// headline, retrieval alone) and beside it the raw gain (the first copy's
// loss minus the second's, which mixes in position and context). With 3 or more seeds each
// interval is a t interval over seeds of each seed's mean over its probes
// (the probes are the same strings and text for every model of a seed,
// and too few at the long gaps, 1 at the longest, for an interval over
// probes); with fewer seeds there is no interval, and the cell gives the
// range of the probes' gains instead. A result without the
// context-matched control (before format 6; format 5's control was
// confounded by its layout) has no controlled gain: "-" in the table, no
// point in the plot.

// PlotCopyProbe is the copy probe's plot, relative to the output.
const PlotCopyProbe = "results/copy_gain.png"

// copySeedsForT is the fewest seeds for an interval over seeds.
const copySeedsForT = 3

// copyStat is one gain (raw or controlled) of a variant at one gap.
type copyStat struct {
	est      stats.Estimate // the t interval over seeds (Covers "seeds"), or the mean with NaN bounds
	min, max float64        // the range of the probes' gains (fewer than copySeedsForT seeds)
	ok       bool           // false: some seed's result has no such gain (the control before format 6)
}

// copyCell is one variant at one gap.
type copyCell struct {
	d, probes int // probes per seed
	seeds     int
	raw       copyStat // first copy - second copy
	control   copyStat // second copy in the control pass - in the probe pass
}

// copyRow is one variant's cells, in gap order.
type copyRow struct {
	variant string
	cells   []copyCell
}

// copyStatOf estimates one gain over the runs (each seed's per-probe
// gains); not ok when a run lacks it.
func copyStatOf(runs [][]float64) copyStat {
	c := copyStat{min: math.Inf(1), max: math.Inf(-1), ok: true}
	var means, all []float64
	for _, gains := range runs {
		if len(gains) == 0 {
			return copyStat{}
		}
		means = append(means, stats.Mean(gains))
		all = append(all, gains...)
		c.min, c.max = math.Min(c.min, slices.Min(gains)), math.Max(c.max, slices.Max(gains))
	}
	if len(runs) >= copySeedsForT {
		c.est = stats.SeedsT(means)
		c.est.Covers = "seeds"
	} else {
		c.est = stats.Estimate{Mean: stats.Mean(all), SE: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	return c
}

// copyGains estimates every variant's raw and controlled gain at every
// gap; variants without a probe (before format 4, or an inference-time
// RoPE extension) are left out.
func copyGains(vs []*variantData) []copyRow {
	var out []copyRow
	for _, g := range byVariant(vs) {
		raw, control := map[int][][]float64{}, map[int][][]float64{} // d -> each seed's gains
		var ds []int
		for _, r := range g.evals {
			if r.Copy == nil {
				continue
			}
			for _, cg := range r.Copy.Gaps {
				if len(cg.Gain) == 0 {
					continue
				}
				if _, ok := raw[cg.D]; !ok {
					ds = append(ds, cg.D)
				}
				raw[cg.D] = append(raw[cg.D], cg.Gain)
				control[cg.D] = append(control[cg.D], cg.ContextMatchedGains(r.Format))
			}
		}
		slices.Sort(ds)
		row := copyRow{variant: g.variant}
		for _, d := range ds {
			runs := raw[d]
			row.cells = append(row.cells, copyCell{d: d, probes: len(runs[0]), seeds: len(runs), raw: copyStatOf(runs), control: copyStatOf(control[d])})
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

// copyCellText is one gain of a cell: the mean with its interval over
// seeds, or the mean with the probes' range; "-" when it was not
// recorded.
func copyCellText(c copyCell, s copyStat) string {
	if !s.ok {
		return "-"
	}
	if c.seeds >= copySeedsForT {
		return estimateText(s.est)
	}
	return fmt.Sprintf("%.3f (%.3f to %.3f)", s.est.Mean, s.min, s.max)
}

// renderCopyProbe writes the copy probe's table and links its plot.
func renderCopyProbe(b *strings.Builder, vs []*variantData) {
	rows, m := copyGains(vs), copyM(vs)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "### Copy probe\n\n"+
		"Zero-shot retrieval: a random string S of m = %d tokens, then a gap of d tokens of held-out text, then S again. "+
		"The control is context-matched: a second pass over the same sequence with the first copy replaced by a fresh string R, so that the second copy is S seen for the first time, "+
		"at the same position, after the same text, with a random string d tokens back; only the match is missing. "+
		"**Controlled gain** (the headline, retrieval alone) = the second copy's mean loss over its tokens 2..m in the control pass - in the probe pass. "+
		"The raw gain = the first copy's mean loss - the second copy's, which also mixes in the copies' different positions (a model past its training length that predicts near uniformly scores random tokens better by itself) "+
		"and their different contexts (the second copy follows a random string, the first follows text) (nats per token; the first token of a string is unpredictable, so left out). "+
		"A large controlled gain: the model retrieves S from about d tokens back; 0: it does not. The probes of one gap share one forward pass and its control pass; the column heads give d and the probes per seed. "+
		"Cells: the mean gain over seeds and probes, with the %s t interval over seeds (each seed's mean over its probes) where the variant has %d or more seeds, "+
		"otherwise the mean over its probes with their range in parentheses; - : no context-matched control recorded (eval.json before format 6).\n\n", m, confidenceText, copySeedsForT)
	var cols []copyCell // every gap any variant has, in order
	for _, r := range rows {
		for _, c := range r.cells {
			if !slices.ContainsFunc(cols, func(x copyCell) bool { return x.d == c.d }) {
				cols = append(cols, c)
			}
		}
	}
	slices.SortFunc(cols, func(a, b copyCell) int { return a.d - b.d })
	b.WriteString("| variant | seeds | gain |")
	for _, c := range cols {
		fmt.Fprintf(b, " d = %d (%d) |", c.d, c.probes)
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, r := range rows {
		for _, kind := range []struct {
			name string
			stat func(copyCell) copyStat
		}{{"controlled", func(c copyCell) copyStat { return c.control }}, {"raw", func(c copyCell) copyStat { return c.raw }}} {
			fmt.Fprintf(b, "| %s | %d seed%s | %s |", r.variant, r.cells[0].seeds, plural(r.cells[0].seeds), kind.name)
			for _, c := range cols {
				k := slices.IndexFunc(r.cells, func(x copyCell) bool { return x.d == c.d })
				if k < 0 {
					b.WriteString(" - |")
					continue
				}
				fmt.Fprintf(b, " %s |", copyCellText(r.cells[k], kind.stat(r.cells[k])))
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(b, "\n![copy gain vs gap: controlled (left), raw (right)](%s)\n\n", PlotCopyProbe)
}

// copyProbePlot: the mean gain against d (log2) per variant, coloured by
// family, in two panels on one y scale: the controlled gain (left, the
// headline) and the raw gain (right); the bars are the interval over
// seeds, or the probes' range with fewer seeds. A gap without a
// controlled gain has no point on the left.
func copyProbePlot(vs []*variantData, path string) error {
	rows := copyGains(vs)
	if len(rows) == 0 {
		return nil
	}
	panel := func(stat func(copyCell) copyStat) []Series {
		return familySeries(rows, func(r copyRow) string { return r.variant }, func(r copyRow, s *Series) {
			for _, c := range r.cells {
				st := stat(c)
				if !st.ok {
					continue
				}
				lo, hi := st.est.Lo, st.est.Hi
				if c.seeds < copySeedsForT {
					lo, hi = st.min, st.max
				}
				s.X, s.Y = append(s.X, math.Log2(float64(c.d))), append(s.Y, st.est.Mean)
				s.Lo, s.Hi = append(s.Lo, lo), append(s.Hi, hi)
			}
		})
	}
	const x, y = "gap d between the copies (tokens, log scale)", "copy gain (nats/token)"
	return IntervalPanels(path, []Panel{
		{Title: "Copy probe, controlled: second copy, control pass - probe pass", X: x, Y: y, Ticks: log2Ticks{}, Series: panel(func(c copyCell) copyStat { return c.control })},
		{Title: "Copy probe, raw: first copy - second copy", X: x, Y: y, Ticks: log2Ticks{}, Series: panel(func(c copyCell) copyStat { return c.raw })},
	})
}

package report

import (
	"fmt"
	"math"
	"strings"

	"routebench/stages/evaluate"
	"routebench/stats"
)

// The same-token context gain (evaluate's ContextGain): per variant and
// length, the mean gain over seeds and windows with its interval
// (stats.CrossedT over seeds x windows, the windows being the same for
// every model; over windows with one seed), and the mean share of tokens
// past the threshold.

// PlotContextGain is the context gain's plot, relative to the output.
const PlotContextGain = "results/context_gain.png"

// gainCell is one variant at one length.
type gainCell struct {
	L, mult     int
	gain, share stats.Estimate
	seeds       int
}

// gainRow is one variant's cells, in length order.
type gainRow struct {
	variant string
	cells   []gainCell
}

// contextGains estimates every variant's gain at every length it has one;
// variants without (results before eval.json format 3) are left out.
func contextGains(vs []*variantData) []gainRow {
	var out []gainRow
	for _, g := range byVariant(vs) {
		row := gainRow{variant: g.variant}
		for i, l := range g.evals[0].Lengths {
			at := func(pick func(*evaluate.ContextGain) []float64) func(*evaluate.Result) []float64 {
				return func(r *evaluate.Result) []float64 {
					if i >= len(r.Lengths) || r.Lengths[i].L != l.L || r.Lengths[i].ContextGain == nil {
						return nil
					}
					return pick(r.Lengths[i].ContextGain)
				}
			}
			gain, n, ok := crossed(g.evals, at(func(c *evaluate.ContextGain) []float64 { return c.Gain }))
			if !ok {
				continue
			}
			share, _, _ := crossed(g.evals, at(func(c *evaluate.ContextGain) []float64 { return c.Share }))
			row.cells = append(row.cells, gainCell{L: l.L, mult: l.Multiplier, gain: gain, share: share, seeds: n})
		}
		if len(row.cells) > 0 {
			out = append(out, row)
		}
	}
	return out
}

// firstGain is the first context gain recorded (its S, T and threshold
// label the section).
func firstGain(vs []*variantData) *evaluate.ContextGain {
	for _, v := range vs {
		if v.eval == nil {
			continue
		}
		for _, l := range v.eval.Lengths {
			if l.ContextGain != nil {
				return l.ContextGain
			}
		}
	}
	return nil
}

// renderContextGain writes the context-gain table and links its plot.
func renderContextGain(b *strings.Builder, vs []*variantData) {
	rows, g := contextGains(vs), firstGain(vs)
	if len(rows) == 0 || g == nil {
		return
	}
	fmt.Fprintf(b, "## Same-token context gain\n\n"+
		"The last S = %d positions before each length L (T/2) of each window, each scored twice: with the window's whole context (the length's own pass) and from one extra pass over the window's tokens [L-S-T, L) alone, "+
		"where each scored input token has %d to %d tokens before it (LongPPL's long-short difference). Gain = short-context loss - long-context loss, nats per token (positive: the long context helps; about 0: the model does not use what lies beyond the short window). "+
		"Cells: the mean gain with its %s t interval, and the mean share of tokens whose gain exceeds %.1f nats. Intervals: over seeds x windows (`stats.CrossedT`, a new seed and a new window) where the variant has several seeds, over windows (one seed) otherwise; the interval column says which. "+
		"Primary protocol; the windows are the length's (under the prefixes design, the long windows' prefixes).\n\n",
		g.Scored, g.Short, g.Short+g.Scored-1, confidenceText, g.Threshold)
	var cols []gainCell
	for _, r := range rows {
		if len(r.cells) > len(cols) {
			cols = r.cells
		}
	}
	b.WriteString("| variant | seeds |")
	for _, c := range cols {
		fmt.Fprintf(b, " %dT (%d) |", c.mult, c.L)
	}
	b.WriteString(" interval over |\n|---|---|" + strings.Repeat("---|", len(cols)+1) + "\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %d |", r.variant, r.cells[0].seeds)
		covers := ""
		for _, c := range cols {
			cell, ok := cellAt(r.cells, c.L)
			if !ok {
				b.WriteString(" - |")
				continue
			}
			fmt.Fprintf(b, " %s; %.0f%% |", estimateText(cell.gain), 100*cell.share.Mean)
			if covers == "" && !math.IsNaN(cell.gain.Lo) {
				covers = cell.gain.Covers
			}
		}
		fmt.Fprintf(b, " %s |\n", orDash(covers))
	}
	fmt.Fprintf(b, "\n![context gain vs length](%s)\n\n", PlotContextGain)
}

func cellAt(cells []gainCell, L int) (gainCell, bool) {
	for _, c := range cells {
		if c.L == L {
			return c, true
		}
	}
	return gainCell{}, false
}

// estimateText prints a mean with its interval, or the mean alone where
// there is none.
func estimateText(e stats.Estimate) string {
	if math.IsNaN(e.Lo) {
		return fmt.Sprintf("%.3f", e.Mean)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", e.Mean, e.Lo, e.Hi)
}

// contextGainPlot: the mean gain against L (log2) per variant with its
// interval, coloured by family.
func contextGainPlot(vs []*variantData, path string) error {
	rows := contextGains(vs)
	if len(rows) == 0 {
		return nil
	}
	series := familySeries(rows, func(r gainRow) string { return r.variant }, func(r gainRow, s *Series) {
		for _, c := range r.cells {
			s.X, s.Y = append(s.X, math.Log2(float64(c.L))), append(s.Y, c.gain.Mean)
			s.Lo, s.Hi = append(s.Lo, c.gain.Lo), append(s.Hi, c.gain.Hi)
		}
	})
	return IntervalPlot(path, "Same-token context gain (short-context loss - long-context loss)", "evaluation length L (tokens, log scale)", "gain (nats/token)", log2Ticks{}, series)
}

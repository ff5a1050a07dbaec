package report

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"routebench/stages/evaluate"
	"routebench/stats"
)

// Per-position loss curves (evaluate's PositionCurve): one plot per
// family of the loss against log position at the longest length, the
// mean over seeds with a band over seeds x windows (stats.CrossedT: the
// windows are the same for every model), or over windows with one seed.

// variantRuns is one variant's evaluated runs on the held-out split, its
// seeds in the config's order.
type variantRuns struct {
	variant string
	evals   []*evaluate.Result
}

// byVariant groups the runs (runs() lists a variant's seeds together)
// that have an evaluation.
func byVariant(vs []*variantData) []variantRuns {
	var out []variantRuns
	for _, v := range vs {
		if v.eval == nil {
			continue
		}
		if n := len(out); n > 0 && out[n-1].variant == v.variant {
			out[n-1].evals = append(out[n-1].evals, v.eval)
			continue
		}
		out = append(out, variantRuns{variant: v.variant, evals: []*evaluate.Result{v.eval}})
	}
	return out
}

// crossed is the CrossedT estimate of y[s][w] = at(run s)[w] over the
// runs for which at returns values, all with as many windows as the first
// (a run without them is left out); ok is false when none has any.
func crossed(evals []*evaluate.Result, at func(*evaluate.Result) []float64) (stats.Estimate, int, bool) {
	var y [][]float64
	for _, r := range evals {
		if x := at(r); len(x) > 0 && (len(y) == 0 || len(x) == len(y[0])) {
			y = append(y, x)
		}
	}
	if len(y) == 0 {
		return stats.Estimate{}, 0, false
	}
	return stats.CrossedT(y), len(y), true
}

// positionSeries is one variant's curve: per bin the estimate over seeds
// and windows.
type positionSeries struct {
	variant string
	seeds   int
	bins    []evaluate.PositionBin
	est     []stats.Estimate
}

// positionCurves estimates every variant's curve; variants without one
// (results before eval.json format 3) are left out.
func positionCurves(vs []*variantData) []positionSeries {
	var out []positionSeries
	for _, g := range byVariant(vs) {
		var first *evaluate.PositionCurve
		for _, r := range g.evals {
			if r.PositionCurve != nil {
				first = r.PositionCurve
				break
			}
		}
		if first == nil {
			continue
		}
		ps := positionSeries{variant: g.variant, bins: first.Bins}
		for b := range first.Bins {
			e, n, _ := crossed(g.evals, func(r *evaluate.Result) []float64 {
				pc := r.PositionCurve
				if pc == nil || len(pc.Bins) != len(first.Bins) {
					return nil
				}
				col := make([]float64, len(pc.WindowLoss))
				for w, row := range pc.WindowLoss {
					col[w] = row[b]
				}
				return col
			})
			ps.est, ps.seeds = append(ps.est, e), n
		}
		out = append(out, ps)
	}
	return out
}

// binCentre is a bin's geometric centre on the log2 axis.
func binCentre(b evaluate.PositionBin) float64 {
	return 0.5 * (math.Log2(float64(b.Start)) + math.Log2(float64(b.End-1)))
}

// familySlug names a family's plot file.
var familySlug = map[int]string{
	familyBaseline.order: "baselines", familyRotQK.order: "rotation-qk", familyRotQKV.order: "rotation-qkv",
	familyBias.order: "alibi", familyPaTH.order: "path",
}

// positionPlotFile is family f's plot, relative to the report's output.
func positionPlotFile(f plotFamily) string {
	return "results/position_loss_" + familySlug[f.order] + ".png"
}

// positionFamilies orders the curves by family, each family's variants
// in the ratio plot's order and styles.
func positionFamilies(curves []positionSeries) ([]plotFamily, map[int][]positionSeries, map[string]lineStyle) {
	var names []string
	byName := map[string]positionSeries{}
	for _, c := range curves {
		names = append(names, c.variant)
		byName[c.variant] = c
	}
	order, styles := familyStyles(names)
	var fams []plotFamily
	in := map[int][]positionSeries{}
	for _, n := range order {
		f := familyOf(n)
		if len(in[f.order]) == 0 {
			fams = append(fams, f)
		}
		in[f.order] = append(in[f.order], byName[n])
	}
	return fams, in, styles
}

// positionPlots writes one plot per family into dir (the report's output).
func positionPlots(vs []*variantData, dir string) error {
	fams, in, styles := positionFamilies(positionCurves(vs))
	for _, f := range fams {
		if err := positionPlot(f, in[f.order], styles, filepath.Join(dir, positionPlotFile(f))); err != nil {
			return err
		}
	}
	return nil
}

func positionPlot(f plotFamily, curves []positionSeries, styles map[string]lineStyle, path string) error {
	p := newPlot("Loss by position at the longest length: "+f.name, "position (tokens seen, log scale)", "loss (nats/token)")
	p.X.Tick.Marker = log2Ticks{}
	p.Legend.Left = false
	for _, c := range curves {
		st := styles[c.variant]
		var line, upper, lower plotter.XYs
		for b, e := range c.est {
			x := binCentre(c.bins[b])
			line = append(line, plotter.XY{X: x, Y: e.Mean})
			if !math.IsNaN(e.Lo) && !math.IsNaN(e.Hi) {
				upper, lower = append(upper, plotter.XY{X: x, Y: e.Hi}), append(lower, plotter.XY{X: x, Y: e.Lo})
			}
		}
		if len(upper) > 1 {
			for i := len(lower) - 1; i >= 0; i-- {
				upper = append(upper, lower[i])
			}
			band, err := plotter.NewPolygon(upper)
			if err != nil {
				return err
			}
			r, g, bl, _ := st.color.RGBA()
			band.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: 50}
			band.LineStyle.Width = 0
			p.Add(band)
		}
		l, err := plotter.NewLine(line)
		if err != nil {
			return err
		}
		l.Color, l.Width, l.Dashes = st.color, vg.Points(1.5), st.dashes
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (%d seed%s)", c.variant, c.seeds, plural(c.seeds)), l)
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// renderPositionCurves links the family plots and says what their bands
// cover.
func renderPositionCurves(b *strings.Builder, vs []*variantData) {
	curves := positionCurves(vs)
	if len(curves) == 0 {
		return
	}
	fams, in, _ := positionFamilies(curves)
	c0 := curves[0]
	fmt.Fprintf(b, "## Loss by position (curves)\n\nEach window's mean loss in log-spaced position bins (%d per octave: edges floor(2^(k/%d)) over positions 1..%d, position p the prediction made from p tokens) at the longest length, the primary protocol; "+
		"the line is the mean over seeds and windows, the band its %s t interval: over seeds x windows (`stats.CrossedT`, a new seed and a new window) for a variant with several seeds, over windows (one seed, `stats.WindowT`) otherwise.\n\n",
		evaluate.BinsPerOctave, evaluate.BinsPerOctave, c0.bins[len(c0.bins)-1].End-1, confidenceText)
	for _, f := range fams {
		var what []string
		for _, c := range in[f.order] {
			what = append(what, fmt.Sprintf("%s: %d seed%s, band over %s", c.variant, c.seeds, plural(c.seeds), coversOf(c.est)))
		}
		fmt.Fprintf(b, "![loss by position, %s](%s)\n\n%s.\n\n", f.name, positionPlotFile(f), strings.Join(what, "; "))
	}
}

// coversOf is what the estimates' intervals cover (the first with one).
func coversOf(es []stats.Estimate) string {
	for _, e := range es {
		if !math.IsNaN(e.Lo) {
			return e.Covers
		}
	}
	return "nothing (one window)"
}

package report

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"routebench/stages/evaluate"
)

// PlotMixing is the route-correlation plot, relative to the output
// directory (an SVG: the curves cross zero many times and are read closely).
const PlotMixing = "results/route_mixing.svg"

// The route's mixing window inside the trained models (evaluate's
// route_mixing, issue 39): per variant, n* at T, 8T, 16T and the longest length
// beside the window the measured gap predicts, and the mean route
// correlation c(n) against n with n* marked.

// renderRouteMixing writes RESULTS.md's section on the route's mixing
// window and its plot (outDir/PlotMixing); nothing, and no plot, when no
// run has route_mixing (results before format 4, or an independent-windows
// design). Runs of one variant at several seeds are one row, with the
// spread over seeds.
func renderRouteMixing(b *strings.Builder, vs []*variantData, outDir string) error {
	byVariant := map[string][]*evaluate.Result{}
	var names []string
	for _, v := range vs {
		if v.eval == nil || v.eval.Mixing == nil || len(v.eval.Mixing.Lengths) == 0 {
			continue
		}
		name := v.variant
		if name == "" {
			name = v.name
		}
		if byVariant[name] == nil {
			names = append(names, name)
		}
		byVariant[name] = append(byVariant[name], v.eval)
	}
	if len(names) == 0 {
		return nil
	}
	names, _ = familyStyles(names)
	first := byVariant[names[0]][0]
	T, mx := first.Protocol.Context, first.Mixing
	longest := mx.Lengths[len(mx.Lengths)-1].L
	var cols []int // T, 8T, 16T (the v4m claim M3 reads 16T and 128T) and the longest
	for _, L := range []int{T, 8 * T, 16 * T} {
		if L < longest {
			cols = append(cols, L)
		}
	}
	cols = append(cols, longest)
	fmt.Fprintf(b, "## The route's mixing window in the trained models\n\n"+
		"The theory's mechanism (check 1) is that routes of n steps decorrelate after a window n* that does not grow with the context. "+
		"Here the steps are the trained models' own on held-out text: the route correlation c(n) is, for the SO(2) variants, the mean "+
		"over routes of n real tokens of cos of the accumulated angle, per layer, head and frequency pair; for PaTH the mean of "+
		"tr(H_{j+n} ... H_{j+1}) / d per layer and head; for RoPE its deterministic cos(n omega_p). n* = 1 + the last route length n "+
		"of the log grid with |c(n)| >= %.2g (the theory stage's threshold); \"none\" when |c| is still above it at the longest route "+
		"measured. The predicted n* is the window the measured gap gives: for SO(2) the first n with rho^n < %.2g, "+
		"rho = |mean exp(i a_t)| over the held-out tokens; for PaTH the last n with |tr(E[H]^n)| / d >= %.2g, E[H] the mean step. "+
		"Cells: median n* over (layer, head, pair) (max found; fraction found); with several seeds the median over seeds and [min .. max]. "+
		"Routes: %s.\n\n", mx.Threshold, mx.Threshold, mx.Threshold, mx.Design)
	fmt.Fprintf(b, "![route correlation c(n) at L = %d](%s)\n\n", longest, PlotMixing)
	b.WriteString("| variant | kind | seeds |")
	for _, L := range cols {
		fmt.Fprintf(b, " n* at %s |", lengthLabel(L, T))
	}
	fmt.Fprintf(b, " predicted n* at %s | n* of the mean curve at %s | noise of c at the longest n |\n|---|---|---|", lengthLabel(longest, T), lengthLabel(longest, T))
	b.WriteString(strings.Repeat("---|", len(cols)+3) + "\n")
	for _, name := range names {
		runs := byVariant[name]
		fmt.Fprintf(b, "| %s | %s | %d |", name, runs[0].Mixing.Kind, len(runs))
		for _, L := range cols {
			fmt.Fprintf(b, " %s |", windowCell(runs, L, func(l evaluate.RouteMixingLength) evaluate.WindowSummary { return l.Window }))
		}
		fmt.Fprintf(b, " %s |", windowCell(runs, longest, func(l evaluate.RouteMixingLength) evaluate.WindowSummary { return l.PredictedWindow }))
		var cw []float64
		var noise []float64
		for _, r := range runs {
			if l, ok := mixingAt(r, longest); ok {
				cw = append(cw, float64(l.CurveWindow))
				if len(l.Noise) > 0 {
					noise = append(noise, l.Noise[len(l.Noise)-1])
				}
			}
		}
		fmt.Fprintf(b, " %s | %s |\n", Spread(cw, func(x float64) string {
			if x == 0 {
				return "none"
			}
			return fmt.Sprintf("%.0f", x)
		}), Spread(noise, func(x float64) string { return fmt.Sprintf("%.3f", x) }))
	}
	b.WriteString("\n")
	return mixingPlot(byVariant, names, longest, filepath.Join(outDir, PlotMixing))
}

// medianRouteWindow is a run's median n* at length L over (layer, head[,
// pair]) and whether it was found: false when the median is censored (a
// window not found by the longest route counts as longer, docs/statistics.md
// v4m). An error when eval.json has no route mixing window at L.
func medianRouteWindow(r *evaluate.Result, L int) (float64, bool, error) {
	if r.Mixing != nil {
		if l, ok := mixingAt(r, L); ok {
			return l.Window.Median, l.Window.Median >= 0, nil
		}
	}
	return 0, false, fmt.Errorf("%s: no route mixing window in eval.json at length %d (format 4, prefixes design, rotation or PaTH variants)", r.Variant, L)
}

// lengthLabel is L as a multiple of T ("T", "8T").
func lengthLabel(L, T int) string {
	if L == T {
		return "T"
	}
	if T > 0 && L%T == 0 {
		return fmt.Sprintf("%dT", L/T)
	}
	return fmt.Sprint(L)
}

// mixingAt is a run's mixing window at length L.
func mixingAt(r *evaluate.Result, L int) (evaluate.RouteMixingLength, bool) {
	for _, l := range r.Mixing.Lengths {
		if l.L == L {
			return l, true
		}
	}
	return evaluate.RouteMixingLength{}, false
}

// windowCell is one table cell: a run's median n* (max found; fraction
// found), or over several runs the median of their medians [min .. max].
func windowCell(runs []*evaluate.Result, L int, pick func(evaluate.RouteMixingLength) evaluate.WindowSummary) string {
	var meds, found []float64
	mx := 0
	for _, r := range runs {
		l, ok := mixingAt(r, L)
		if !ok {
			continue
		}
		s := pick(l)
		m := s.Median
		if m < 0 {
			m = math.Inf(1)
		}
		meds, found = append(meds, m), append(found, s.Found)
		mx = max(mx, s.Max)
	}
	if len(meds) == 0 {
		return "-"
	}
	show := func(x float64) string {
		if math.IsInf(x, 1) {
			return "none"
		}
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%s (max %d; %.0f%% found)", Spread(meds, show), mx, 100*median(found))
}

// Spread is the median of xs, and [min .. max] where they differ (an
// infinite value, a window not found, sorts last); the study's mixing
// table reads it too.
func Spread(xs []float64, show func(float64) string) string {
	if len(xs) == 0 {
		return "-"
	}
	s := show(median(xs))
	if lo, hi := slices.Min(xs), slices.Max(xs); lo != hi {
		s += fmt.Sprintf(" [%s .. %s]", show(lo), show(hi))
	}
	return s
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if s[(n-1)/2] == s[n/2] { // also infinite middles
		return s[n/2]
	}
	return (s[(n-1)/2] + s[n/2]) / 2
}

// mixingPlot draws each variant's mean c(n) at length L against log2 n
// (averaged over seeds where their grids agree, else the first seed's),
// the threshold band as dashed lines, and n* of the mean curve as a
// marker on the threshold.
func mixingPlot(byVariant map[string][]*evaluate.Result, names []string, L int, path string) error {
	p := newPlot(fmt.Sprintf("Route correlation c(n) at L = %d (mean over layers, heads, pairs)", L), "route length n (tokens, log scale)", "c(n)")
	p.X.Tick.Marker = log2Ticks{}
	p.Legend.Left = false // the curves start high on the left
	_, styles := familyStyles(names)
	var thr float64
	xmax := 0.0
	for i, name := range names {
		runs := byVariant[name]
		l0, ok := mixingAt(runs[0], L)
		if !ok || len(l0.Grid) == 0 {
			continue
		}
		thr = runs[0].Mixing.Threshold
		curve := slices.Clone(l0.Curve)
		nAvg := 1
		for _, r := range runs[1:] {
			if l, ok := mixingAt(r, L); ok && slices.Equal(l.Grid, l0.Grid) {
				for g, c := range l.Curve {
					curve[g] += c
				}
				nAvg++
			}
		}
		pts := make(plotter.XYs, len(curve))
		for g, c := range curve {
			pts[g] = plotter.XY{X: math.Log2(float64(l0.Grid[g])), Y: c / float64(nAvg)}
		}
		xmax = math.Max(xmax, pts[len(pts)-1].X)
		st := styles[name]
		label := name
		if nAvg > 1 {
			label += fmt.Sprintf(" (mean of %d seeds)", nAvg)
		}
		if err := addLine(p, Series{Name: label, style: &st}, i, pts); err != nil {
			return err
		}
		if n, ok := windowOf(curve, l0.Grid, float64(nAvg)*thr); ok {
			sc, err := plotter.NewScatter(plotter.XYs{{X: math.Log2(float64(n)), Y: thr}})
			if err != nil {
				return err
			}
			sc.Color, sc.Shape, sc.Radius = st.color, draw.PyramidGlyph{}, vg.Points(5)
			p.Add(sc)
		}
	}
	for _, y := range []float64{thr, -thr} {
		band, err := plotter.NewLine(plotter.XYs{{X: 0, Y: y}, {X: xmax, Y: y}})
		if err != nil {
			return err
		}
		band.Color, band.Dashes = color.Gray{Y: 120}, []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(band)
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// windowOf is n* of a curve given as sums (each |c| compared with thr,
// the threshold times the number of curves summed): 1 + the last grid n
// at or above it; false when that is the last n.
func windowOf(sum []float64, grid []int, thr float64) (int, bool) {
	last := -1
	for g, x := range sum {
		if math.Abs(x) >= thr {
			last = g
		}
	}
	if last == len(grid)-1 {
		return 0, false
	}
	if last < 0 {
		return 1, true
	}
	return grid[last] + 1, true
}

package theory

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The figures use gonum/plot's raster backend; rendering has no clock or
// randomness in it, so the same data give the same PNG bytes (tested).

func newPlot(title, xl, yl string, logX, logY bool) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xl, yl
	if logX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	if logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// series adds a line (dashed for predictions/bounds) or a line with points.
// Points that a log axis cannot show (<= 0) or that are not finite are
// dropped rather than crashing the renderer.
func series(p *plot.Plot, name string, x, y []float64, idx int, dashed, points bool) {
	_, logX := p.X.Scale.(plot.LogScale)
	_, logY := p.Y.Scale.(plot.LogScale)
	var xy plotter.XYs
	for i := range x {
		if math.IsNaN(x[i]) || math.IsNaN(y[i]) || math.IsInf(y[i], 0) || (logX && x[i] <= 0) || (logY && y[i] <= 0) {
			continue
		}
		xy = append(xy, plotter.XY{X: x[i], Y: y[i]})
	}
	if len(xy) == 0 {
		return
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return
	}
	l.Color = plotutil.Color(idx)
	l.Width = vg.Points(1.2)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		l.Color = darken(plotutil.Color(idx))
	}
	p.Add(l)
	if points {
		s, err := plotter.NewScatter(xy)
		if err == nil {
			s.Color = plotutil.Color(idx)
			s.Shape = plotutil.Shape(idx)
			s.Radius = vg.Points(2)
			p.Add(s)
			if name != "" {
				p.Legend.Add(name, l, s)
			}
			return
		}
	}
	if name != "" {
		p.Legend.Add(name, l)
	}
}

func darken(c color.Color) color.Color {
	r, g, b, a := c.RGBA()
	return color.RGBA64{R: uint16(r * 3 / 4), G: uint16(g * 3 / 4), B: uint16(b * 3 / 4), A: uint16(a)}
}

func hline(p *plot.Plot, x0, x1, y float64, name string) {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		return
	}
	l.Color = color.Gray{Y: 120}
	l.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
}

// renderPNG lays out a grid of plots (rows x cols) and encodes it as PNG.
func renderPNG(grid [][]*plot.Plot, tileW, tileH vg.Length) ([]byte, error) {
	rows, cols := len(grid), len(grid[0])
	img := vgimg.NewWith(vgimg.UseWH(tileW*vg.Length(cols), tileH*vg.Length(rows)), vgimg.UseDPI(96))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(12), PadY: vg.Points(12),
		PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10)}
	canvases := plot.Align(grid, tiles, dc)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return buf.Bytes(), nil
}

func ints(v []int) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func rangeN(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i)
	}
	return out
}

// plotMixing: one tile per family with the correlation curves of every
// context, the exact curve Re(phi^n), the bound rho^n and the threshold.
func plotMixing(r *MixingResult) (map[string][]byte, error) {
	out := map[string][]byte{}
	nf := len(r.Families)
	cols := min(3, nf)
	rows := (nf + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for fi, f := range r.Families {
		p := newPlot(fmt.Sprintf("%s (d=%d)", f.Family.Name, f.Family.Dim), "route length n", "mean q.Pk/|q||k|", false, false)
		n := rangeN(r.MaxRoute + 1)
		for ci, c := range f.Contexts {
			series(p, fmt.Sprintf("L=%d", c.L), n, c.Corr, ci, false, false)
		}
		ex, bd := make([]float64, len(n)), make([]float64, len(n))
		for i := range n {
			ex[i] = math.Pow(f.Rho, n[i]) * math.Cos(f.PhiArg*n[i])
			bd[i] = math.Pow(f.Rho, n[i])
		}
		series(p, "Re(phi^n)", n, ex, 5, true, false)
		series(p, "rho^n", n, bd, 6, true, false)
		hline(p, 0, n[len(n)-1], r.Threshold, fmt.Sprintf("threshold %.2g", r.Threshold))
		p.Y.Min, p.Y.Max = -0.2, 1.05
		grid[fi/cols][fi%cols] = p
	}
	for i := nf; i < rows*cols; i++ { // gonum/plot needs a plot in every tile
		grid[i/cols][i%cols] = newPlot("", "", "", false, false)
	}
	b, err := renderPNG(grid, 4*vg.Inch, 3*vg.Inch)
	if err != nil {
		return nil, err
	}
	out["mixing_contexts.png"] = b

	p := newPlot("||E^[P_n]||_op (solid) vs rho^n (dashed); flat tail = Monte Carlo floor", "route length n", "operator norm", false, true)
	for fi, f := range r.Families {
		var x, y, pr []float64
		for _, o := range f.OpNorm {
			x, y, pr = append(x, float64(o.N)), append(y, o.Measured), append(pr, o.Predicted)
		}
		series(p, f.Family.Name, x, y, fi, false, true)
		series(p, "", x, pr, fi, true, false)
	}
	p.Y.Min = 1e-3
	b, err = renderPNG([][]*plot.Plot{{p}}, 6*vg.Inch, 4*vg.Inch)
	if err != nil {
		return nil, err
	}
	out["mixing_opnorm.png"] = b
	return out, nil
}

func plotConcentration(r *ConcentrationResult) (map[string][]byte, error) {
	po := newPlot("orthogonal (Householder far routes)", "s = d t^2", "P(|q.Pk| > t)", false, true)
	ps := newPlot("block SO(2) (flat query, far routes)", "s = d t^2", "P(|q.Pk| > t)", false, true)
	var sMax float64
	for di, d := range r.Dims {
		var s, h, so []float64
		for _, t := range d.Tails {
			s, h, so = append(s, t.S), append(h, t.HH), append(so, t.SO2)
			sMax = math.Max(sMax, t.S)
		}
		series(po, fmt.Sprintf("d=%d", d.D), s, h, di, false, true)
		series(ps, fmt.Sprintf("d=%d", d.D), s, so, di, false, true)
	}
	var x, lv, hf []float64
	for i := 0; i <= 100; i++ {
		s := sMax * float64(i) / 100
		x, lv, hf = append(x, s), append(lv, math.Min(1, 2*math.Exp(-s/2))), append(hf, math.Min(1, 2*math.Exp(-s/4)))
	}
	series(po, "Levy 2exp(-s/2)", x, lv, 7, true, false)
	series(ps, "Hoeffding 2exp(-s/4)", x, hf, 7, true, false)
	po.Y.Min, ps.Y.Min = 1e-4, 1e-4
	b, err := renderPNG([][]*plot.Plot{{po, ps}}, 4.5*vg.Inch, 3.5*vg.Inch)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{"concentration_tails.png": b}, nil
}

func plotFarMass(r *FarMassResult) (map[string][]byte, error) {
	m := ints(r.FarCounts)
	var grid []*plot.Plot
	ks := map[int]bool{}
	for _, row := range r.Rows {
		ks[row.K] = true
	}
	var kList []int
	for _, row := range r.Rows {
		if ks[row.K] {
			kList = append(kList, row.K)
			ks[row.K] = false
		}
	}
	for _, k := range kList {
		p := newPlot(fmt.Sprintf("far mass, K=%d near sources", k), "far sources M", "rho_D", true, false)
		i := 0
		for _, row := range r.Rows {
			if row.K != k {
				continue
			}
			series(p, fmt.Sprintf("lambda=%g", row.Lambda), m, row.Mean, i, false, true)
			series(p, "", m, row.Bound, i, true, false)
			i++
		}
		j := 0
		for _, a := range r.ALiBi {
			if a.K == k && j == 0 {
				series(p, fmt.Sprintf("ALiBi slope %g, lambda=%g", a.Slope, a.Lambda), m, a.Mean, 5, false, true)
				j++
			}
		}
		// Head room above 1 keeps the legend off the curves, which end near 1.
		p.Y.Min, p.Y.Max = 0, 1.5
		p.Title.Text += " (dashed: lower bound)"
		grid = append(grid, p)
	}
	b, err := renderPNG([][]*plot.Plot{grid}, 4*vg.Inch, 3.2*vg.Inch)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{"farmass.png": b}, nil
}

func plotIncoherence(r *IncoherenceResult) (map[string][]byte, error) {
	p := newPlot("far-value aggregate energy E|F|^2", "far values M", "E|F|^2", true, true)
	p.Legend.Left = true
	var m, pl, plx, tr, trx, bd []float64
	for _, pt := range r.Points {
		m = append(m, float64(pt.M))
		pl, plx = append(pl, pt.Plain), append(plx, pt.PlainExact)
		tr, trx = append(tr, pt.Trans), append(trx, pt.TransExact)
		bd = append(bd, float64(pt.M)*r.BoundPerM)
	}
	series(p, "no value transport (measured)", m, pl, 0, false, true)
	series(p, "exact M^2|b|^2 + M d s^2", m, plx, 0, true, false)
	series(p, "value transport (measured)", m, tr, 1, false, true)
	series(p, "exact (phase cancellation)", m, trx, 1, true, false)
	series(p, "bound M(|b|^2(1+phi)/(1-phi) + d s^2)", m, bd, 2, true, false)
	b, err := renderPNG([][]*plot.Plot{{p}}, 6*vg.Inch, 4*vg.Inch)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{"incoherence.png": b}, nil
}

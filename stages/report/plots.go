package report

import (
	"fmt"
	"image/color"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot files, relative to the report's output directory.
const (
	PlotRatio = "results/ppl_ratio.png"
	PlotFar   = "results/far_mass.png"
	PlotTrain = "results/train_loss.png"
)

// log2Ticks labels a log2 axis with the plain values.
type log2Ticks struct{}

func (log2Ticks) Ticks(min, max float64) []plot.Tick {
	var t []plot.Tick
	for e := math.Floor(min); e <= math.Ceil(max); e++ {
		t = append(t, plot.Tick{Value: e, Label: fmt.Sprintf("%.0f", math.Exp2(e))})
	}
	return t
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

// variantStyle is variant i's line colour and width: the soft palette,
// then the dark one, so that more than seven variants never share a colour.
func variantStyle(i int) (color.Color, vg.Length) {
	if n := len(plotutil.SoftColors); i >= n && i < 2*n {
		return plotutil.DarkColors[i-n], vg.Points(1.5)
	}
	return plotutil.Color(i), vg.Points(1.5)
}

// ratioPlot: PPL(L)/PPL(T) against L (log2), one line per variant, with
// its interval as error bars (the window t's, or over seeds).
// Lines are coloured and ordered by family (families.go).
func ratioPlot(vs []*variantData, path string) error {
	byName := map[string]*variantData{}
	var names []string
	for _, v := range vs {
		if v.eval != nil {
			byName[v.name] = v
			names = append(names, v.name)
		}
	}
	order, styles := familyStyles(names)
	var series []Series
	for _, name := range order {
		v := byName[name]
		st := styles[name]
		s := Series{Name: v.name, style: &st}
		for _, l := range v.eval.Lengths {
			s.X, s.Y = append(s.X, math.Log2(float64(l.L))), append(s.Y, l.Ratio.Value)
			s.Lo, s.Hi = append(s.Lo, l.Ratio.Lo), append(s.Hi, l.Ratio.Hi)
		}
		series = append(series, s)
	}
	return IntervalPlot(path, "Perplexity ratio PPL(L) / PPL(T)", "evaluation length L (tokens, log scale)", "PPL ratio", log2Ticks{}, series)
}

// Series is one line of an interval plot: Y with its interval [Lo, Hi]
// at each X (a NaN bound: no bar on that side).
type Series struct {
	Name         string
	X, Y, Lo, Hi []float64
	style        *lineStyle // nil: the i-th colour of the palette
}

// IntervalPlot draws each series as a line with markers and its intervals
// as error bars, one colour and marker per series, into a PNG at path.
// ticks labels the x axis (nil: plain numbers).
func IntervalPlot(path, title, xLabel, yLabel string, ticks plot.Ticker, series []Series) error {
	p, err := intervalPanel(Panel{Title: title, X: xLabel, Y: yLabel, Ticks: ticks, Series: series})
	if err != nil {
		return err
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// Panel is one plot of IntervalPanels: IntervalPlot's arguments but the
// path.
type Panel struct {
	Title, X, Y string
	Ticks       plot.Ticker
	Series      []Series
}

// IntervalPanels draws the panels side by side, each as IntervalPlot
// would, on one y scale (so that heights compare across panels), into a
// PNG at path. A series without points is left out of its panel (its
// marker stays the one of its place in the list, as in the other panels).
func IntervalPanels(path string, panels []Panel) error {
	row := make([]*plot.Plot, len(panels))
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, pn := range panels {
		p, err := intervalPanel(pn)
		if err != nil {
			return fmt.Errorf("panel %q: %w", pn.Title, err)
		}
		row[k] = p
		lo, hi = math.Min(lo, p.Y.Min), math.Max(hi, p.Y.Max)
	}
	for _, p := range row {
		if lo <= hi {
			p.Y.Min, p.Y.Max = lo, hi
		}
	}
	const tileW, tileH = 7 * vg.Inch, 4.5 * vg.Inch
	img := vgimg.New(tileW*vg.Length(len(row)), tileH)
	canvases := plot.Align([][]*plot.Plot{row}, draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Points(18), PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10)}, draw.New(img))
	for k, p := range row {
		p.Draw(canvases[0][k])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// intervalPanel is one interval plot, not yet saved.
func intervalPanel(pn Panel) (*plot.Plot, error) {
	p := newPlot(pn.Title, pn.X, pn.Y)
	if pn.Ticks != nil {
		p.X.Tick.Marker = pn.Ticks
	}
	if l, ok := pn.Ticks.(LabelTicks); ok {
		p.X.Min, p.X.Max = -0.5, float64(len(l))-0.5 // the first and last category off the frame
	}
	for i, s := range pn.Series {
		if len(s.X) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(s.X))
		errs := make(plotter.YErrors, len(s.X))
		for k := range s.X {
			pts[k] = plotter.XY{X: s.X[k], Y: s.Y[k]}
			if lo := s.Lo[k]; !math.IsNaN(lo) {
				errs[k].Low = s.Y[k] - lo
			}
			if hi := s.Hi[k]; !math.IsNaN(hi) {
				errs[k].High = hi - s.Y[k]
			}
		}
		if err := addLine(p, s, i, pts); err != nil {
			return nil, err
		}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{pts, errs})
		if err != nil {
			return nil, err
		}
		eb.Color, _ = variantStyle(i)
		if s.style != nil {
			eb.Color = s.style.color
		}
		p.Add(eb)
	}
	return p, nil
}

// LabelTicks labels the x positions 0, 1, ... with the given names: an axis
// of categories (a sweep's values) drawn evenly spaced.
type LabelTicks []string

// Ticks implements plot.Ticker.
func (l LabelTicks) Ticks(min, max float64) []plot.Tick {
	var t []plot.Tick
	for i, name := range l {
		if float64(i) >= min && float64(i) <= max {
			t = append(t, plot.Tick{Value: float64(i), Label: name})
		}
	}
	return t
}

func addLine(p *plot.Plot, series Series, i int, pts plotter.XYs) error {
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	l.Color, l.Width = variantStyle(i)
	s.Color, _ = variantStyle(i)
	if series.style != nil {
		l.Color, s.Color, l.Dashes = series.style.color, series.style.color, series.style.dashes
	}
	s.Shape = plotutil.Shape(i)
	p.Add(l, s)
	p.Legend.Add(series.Name, l, s)
	return nil
}

// farPlot: mean attention mass beyond distance T against L.
func farPlot(vs []*variantData, path string) error {
	p := newPlot("Attention mass beyond distance T (mean over layers, heads, queries)", "evaluation length L (tokens, log scale)", "far mass")
	p.X.Tick.Marker = log2Ticks{}
	for i, v := range vs {
		if v.eval == nil {
			continue
		}
		var pts plotter.XYs
		for _, l := range v.eval.Lengths {
			if fm, ok := farAt(l.FarMass, v.eval.Protocol.Context); ok && fm.Heads > 0 {
				pts = append(pts, plotter.XY{X: math.Log2(float64(l.L)), Y: fm.Mean})
			}
		}
		if len(pts) == 0 {
			continue
		}
		if err := addLine(p, Series{Name: v.name}, i, pts); err != nil {
			return err
		}
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// trainPlot: training loss (smoothed) and held-out loss against step.
func trainPlot(vs []*variantData, path string) error {
	p := newPlot("Training loss (moving average of 20 steps)", "step", "loss (nats/token)")
	for i, v := range vs {
		if v.train == nil || len(v.train.TrainLoss) == 0 {
			continue
		}
		sm := smooth(v.train.TrainLoss, 20)
		pts := make(plotter.XYs, len(sm))
		for k, y := range sm {
			pts[k] = plotter.XY{X: float64(k + 1), Y: y}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color, l.Width = variantStyle(i)
		p.Add(l)
		p.Legend.Add(v.name, l)
	}
	p.Legend.Left = false
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

func smooth(x []float64, w int) []float64 {
	out := make([]float64, len(x))
	s := 0.0
	for i, v := range x {
		s += v
		if i >= w {
			s -= x[i-w]
		}
		out[i] = s / float64(min(i+1, w))
	}
	return out
}

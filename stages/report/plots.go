package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
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
// the bootstrap interval as error bars.
func ratioPlot(vs []*variantData, path string) error {
	p := newPlot("Perplexity ratio PPL(L) / PPL(T)", "evaluation length L (tokens, log scale)", "PPL ratio")
	p.X.Tick.Marker = log2Ticks{}
	for i, v := range vs {
		if v.eval == nil {
			continue
		}
		pts := make(plotter.XYs, len(v.eval.Lengths))
		errs := make(plotter.YErrors, len(v.eval.Lengths))
		for k, l := range v.eval.Lengths {
			pts[k] = plotter.XY{X: math.Log2(float64(l.L)), Y: l.Ratio.Value}
			errs[k].Low = l.Ratio.Value - l.Ratio.Lo
			errs[k].High = l.Ratio.Hi - l.Ratio.Value
		}
		if err := addLine(p, v.name, i, pts); err != nil {
			return err
		}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{pts, errs})
		if err != nil {
			return err
		}
		eb.Color, _ = variantStyle(i)
		p.Add(eb)
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

func addLine(p *plot.Plot, name string, i int, pts plotter.XYs) error {
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	l.Color, l.Width = variantStyle(i)
	s.Color, _ = variantStyle(i)
	s.Shape = plotutil.Shape(i)
	p.Add(l, s)
	p.Legend.Add(name, l, s)
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
		if err := addLine(p, v.name, i, pts); err != nil {
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

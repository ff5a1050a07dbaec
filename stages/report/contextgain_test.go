package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"routebench/stages/evaluate"
	"routebench/stats"
)

// curvesFixture: alibi at two seeds, rope at one, T = 8, lengths 8, 16,
// 32, three windows; the context gain at 16 and 32, the position curve
// at 32. Values differ by seed, window, length and bin, so that seeds
// pooled as windows, or a cell read from another length or bin, give
// other numbers.
func curvesFixture() []*variantData {
	bins := evaluate.PositionBins(32)
	run := func(variant string, seed int) *variantData {
		res := &evaluate.Result{Variant: variant, Protocol: evaluate.Config{Context: 8}}
		for k, L := range []int{8, 16, 32} {
			lr := evaluate.LengthResult{L: L, Multiplier: L / 8}
			if L >= 16 {
				g := &evaluate.ContextGain{Scored: 4, Short: 8, Threshold: evaluate.ContextGainThreshold}
				for w := range 3 {
					g.Gain = append(g.Gain, 0.1*float64(seed)+0.03*float64(w*w)+0.2*float64(k))
					g.Share = append(g.Share, 0.25*float64((w+seed)%3))
				}
				lr.ContextGain = g
			}
			res.Lengths = append(res.Lengths, lr)
		}
		pc := &evaluate.PositionCurve{L: 32, Bins: bins}
		for w := range 3 {
			row := make([]float64, len(bins))
			for b := range bins {
				row[b] = 3 - 0.1*float64(b) + 0.05*float64(seed*w) + 0.01*float64(w*w*b)
			}
			pc.WindowLoss = append(pc.WindowLoss, row)
		}
		res.PositionCurve = pc
		return &variantData{name: variant, variant: variant, seed: uint64(seed), eval: res}
	}
	return []*variantData{run("alibi", 1), run("alibi", 2), run("rope", 1)}
}

// TestContextGainIntervals: a variant's gain at a length is CrossedT over
// its seeds x windows, one seed's is WindowT; the table labels what each
// covers; the values pooled as if they were 6 windows of one seed would
// print another interval.
func TestContextGainIntervals(t *testing.T) {
	vs := curvesFixture()
	rows := contextGains(vs)
	if len(rows) != 2 || rows[0].variant != "alibi" || rows[1].variant != "rope" || len(rows[0].cells) != 2 {
		t.Fatalf("rows %+v: want alibi and rope, two lengths each", rows)
	}
	y := [][]float64{vs[0].eval.Lengths[2].ContextGain.Gain, vs[1].eval.Lengths[2].ContextGain.Gain}
	want := stats.CrossedT(y)
	got := rows[0].cells[1]
	if got.L != 32 || got.seeds != 2 || got.gain != want || got.gain.Covers != "seeds x windows" {
		t.Errorf("alibi at 32: %+v, want CrossedT %+v", got, want)
	}
	var grand float64
	for _, r := range y {
		for _, v := range r {
			grand += v / 6
		}
	}
	if math.Abs(got.gain.Mean-grand) > 1e-12 {
		t.Errorf("alibi at 32: mean %.6f, the grand mean %.6f", got.gain.Mean, grand)
	}
	if pooled := stats.WindowT(append(append([]float64(nil), y[0]...), y[1]...)); math.Abs(pooled.Hi-got.gain.Hi) < 1e-9 {
		t.Errorf("the six values pooled as windows give the same interval: the check cannot fail")
	}
	one := rows[1].cells[0]
	if w := stats.WindowT(vs[2].eval.Lengths[1].ContextGain.Gain); one.gain != w || one.gain.Covers != "windows" || one.seeds != 1 {
		t.Errorf("rope at 16: %+v, want WindowT %+v", one, w)
	}
	var b strings.Builder
	renderContextGain(&b, vs)
	md := b.String()
	for _, s := range []string{"S = 4 positions", "8 to 11 tokens", "0.5 nats", "| 2T (16) | 4T (32) | interval over |",
		"| alibi | 2 | ", " | seeds x windows |", "| rope | 1 | ", " | windows |", PlotContextGain, estimateText(want)} {
		if !strings.Contains(md, s) {
			t.Errorf("the context-gain section lacks %q:\n%s", s, md)
		}
	}
}

// TestPositionCurvesIntervals: each bin's estimate is CrossedT over the
// variant's seeds x windows (WindowT with one seed); one plot per family
// is written and linked, with what its bands cover; the tidy rows hold
// each bin per window and its mean with the window t interval.
func TestPositionCurvesIntervals(t *testing.T) {
	vs := curvesFixture()
	curves := positionCurves(vs)
	if len(curves) != 2 || curves[0].seeds != 2 || curves[1].seeds != 1 {
		t.Fatalf("curves %+v", curves)
	}
	for b := range curves[0].bins {
		col := func(v *variantData) []float64 {
			var x []float64
			for _, row := range v.eval.PositionCurve.WindowLoss {
				x = append(x, row[b])
			}
			return x
		}
		if want := stats.CrossedT([][]float64{col(vs[0]), col(vs[1])}); curves[0].est[b] != want {
			t.Errorf("alibi bin %d: %+v, want %+v", b, curves[0].est[b], want)
		}
		if want := stats.WindowT(col(vs[2])); curves[1].est[b] != want {
			t.Errorf("rope bin %d: %+v, want %+v", b, curves[1].est[b], want)
		}
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "results"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := positionPlots(vs, dir); err != nil {
		t.Fatal(err)
	}
	if err := contextGainPlot(vs, filepath.Join(dir, PlotContextGain)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{positionPlotFile(familyBias), positionPlotFile(familyBaseline), PlotContextGain} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("plot %s: %v", f, err)
		}
	}
	var b strings.Builder
	renderPositionCurves(&b, vs)
	md := b.String()
	for _, s := range []string{positionPlotFile(familyBias), "alibi: 2 seeds, band over seeds x windows", "rope: 1 seed, band over windows", "positions 1..32"} {
		if !strings.Contains(md, s) {
			t.Errorf("the position section lacks %q:\n%s", s, md)
		}
	}
	rs := tidyRows(TidySet{Runs: []TidyRun{{Variant: "rope", Seed: 1, Eval: vs[2].eval}}})
	pc := vs[2].eval.PositionCurve
	bin := pc.Bins[len(pc.Bins)-1]
	var agg, win2 *tidyRow
	var gains int
	for i, r := range rs {
		inBin := r.Metric == "position_loss" && r.PosStart == bin.Start && r.PosEnd == bin.End
		switch {
		case inBin && r.Level == LevelSeed:
			agg = &rs[i]
		case inBin && r.Level == LevelWindow && r.Window == 2:
			win2 = &rs[i]
		case r.Metric == "context_gain" || r.Metric == "context_gain_share":
			gains++
		}
	}
	col := []float64{pc.WindowLoss[0][len(pc.Bins)-1], pc.WindowLoss[1][len(pc.Bins)-1], pc.WindowLoss[2][len(pc.Bins)-1]}
	if e := stats.WindowT(col); agg == nil || agg.L != 32 || agg.Value != e.Mean || agg.Lo != e.Lo || agg.Hi != e.Hi || agg.Interval != "t95:windows" {
		t.Errorf("the last bin's mean row %+v, want %+v over windows", agg, e)
	}
	if win2 == nil || win2.Value != col[2] {
		t.Errorf("the last bin's window-2 row %+v, want %g", win2, col[2])
	}
	if gains != 2*2*5 { // two lengths x (gain, share) x (mean + 3 windows + the one seed's all row)
		t.Errorf("%d context-gain rows, want 20", gains)
	}
}

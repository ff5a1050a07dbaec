package report

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"routebench/stages/evaluate"
	"routebench/stats"
)

// copyFixture: alibi at three seeds, rope at one, and xpos at one from
// before the context-matched control (format 5: its ControlGain is the
// confounded in-gap control, which readers must leave out); gaps 16 (3
// probes) and 63 (1 probe).
// Gains differ by seed, probe and gap, and the controlled gains from the
// raw ones (the control's loss lies below the first copy's by more at
// the long gap, as for a model past its training length), so that a cell
// read from another gap or the other gain, or probes pooled over seeds,
// give other numbers.
func copyFixture() []*variantData {
	run := func(variant string, seed int, contextMatched bool) *variantData {
		cp := &evaluate.CopyProbe{M: 32}
		for k, d := range []int{16, 63} {
			g := evaluate.CopyGap{D: d, Probes: 3 - 2*k}
			for i := range g.Probes {
				first := 5 + 0.1*float64(i)
				second := first - (1 + 0.3*float64(seed) + 0.05*float64(i*i) - 0.5*float64(k))
				g.FirstLoss, g.SecondLoss = append(g.FirstLoss, first), append(g.SecondLoss, second)
				g.Gain = append(g.Gain, first-second)
				{ // format 5 recorded a control too, another one
					ctl := first - 0.1 - 0.4*float64(k) + 0.02*float64(seed*i)
					g.ControlLoss, g.ControlGain = append(g.ControlLoss, ctl), append(g.ControlGain, ctl-second)
				}
			}
			g.MeanGain = stats.Mean(g.Gain)
			g.MeanControlGain = stats.Mean(g.ControlGain)
			cp.Gaps = append(cp.Gaps, g)
		}
		format := evaluate.FormatVersion
		if !contextMatched {
			format = evaluate.CopyControlFormat - 1
		}
		res := &evaluate.Result{Format: format, Variant: variant, Protocol: evaluate.Config{Context: 16}, Copy: cp}
		return &variantData{name: variant, variant: variant, seed: uint64(seed), eval: res}
	}
	return []*variantData{run("alibi", 1, true), run("alibi", 2, true), run("alibi", 3, true), run("rope", 1, true), run("xpos", 1, false)}
}

// TestCopyProbeSection: with three seeds a cell is the t interval over
// the seeds' mean gains (not over the nine probes pooled), for the
// controlled gain and the raw one alike; with one seed the mean over its
// probes and their range; a result before the control has "-" for its
// controlled gain; the table has a row per variant and gain (the
// controlled first) and a column per gap, and the plot is written.
func TestCopyProbeSection(t *testing.T) {
	vs := copyFixture()
	rows := copyGains(vs)
	if len(rows) != 3 || rows[0].variant != "alibi" || rows[1].variant != "rope" || rows[2].variant != "xpos" || len(rows[0].cells) != 2 {
		t.Fatalf("rows %+v: want alibi, rope and xpos, two gaps each", rows)
	}
	seedsT := func(gains func(evaluate.CopyGap) []float64) (stats.Estimate, []float64) {
		var means, pooled []float64
		for _, v := range vs[:3] {
			g := gains(v.eval.Copy.Gaps[0])
			means = append(means, stats.Mean(g))
			pooled = append(pooled, g...)
		}
		return stats.SeedsT(means), pooled
	}
	wantRaw, pooled := seedsT(func(g evaluate.CopyGap) []float64 { return g.Gain })
	wantCtl, _ := seedsT(func(g evaluate.CopyGap) []float64 { return g.ControlGain })
	got := rows[0].cells[0]
	for _, c := range []struct {
		name      string
		got, want stats.Estimate
	}{{"raw", got.raw.est, wantRaw}, {"controlled", got.control.est, wantCtl}} {
		if got.d != 16 || got.seeds != 3 || got.probes != 3 || c.got.Mean != c.want.Mean || c.got.Lo != c.want.Lo || c.got.Hi != c.want.Hi || c.got.Covers != "seeds" {
			t.Errorf("alibi at 16, %s: %+v, want SeedsT %+v", c.name, got, c.want)
		}
	}
	if math.Abs(wantRaw.Mean-wantCtl.Mean) < 1e-3 {
		t.Errorf("the fixture's raw and controlled gains agree: a cell read from the other gain would pass")
	}
	if p := stats.WindowT(pooled); math.Abs(p.Hi-got.raw.est.Hi) < 1e-9 {
		t.Errorf("the nine probes pooled give the same interval: the check cannot fail")
	}
	rope := vs[3].eval.Copy.Gaps[0]
	one := rows[1].cells[0]
	if one.seeds != 1 || !math.IsNaN(one.raw.est.Lo) || one.raw.est.Mean != stats.Mean(rope.Gain) || one.raw.min != slices.Min(rope.Gain) || one.raw.max != slices.Max(rope.Gain) {
		t.Errorf("rope at 16, raw: %+v, want the mean %v and range of %v", one.raw, stats.Mean(rope.Gain), rope.Gain)
	}
	if !one.control.ok || one.control.est.Mean != stats.Mean(rope.ControlGain) || one.control.min != slices.Min(rope.ControlGain) || one.control.max != slices.Max(rope.ControlGain) {
		t.Errorf("rope at 16, controlled: %+v, want the mean %v and range of %v", one.control, stats.Mean(rope.ControlGain), rope.ControlGain)
	}
	old := rows[2].cells[0]
	if old.control.ok || !old.raw.ok || copyCellText(old, old.control) != "-" {
		t.Errorf("xpos (format 5, its in-gap control) at 16: %+v, want a raw gain and no controlled one", old)
	}

	var b strings.Builder
	renderCopyProbe(&b, vs)
	md := b.String()
	for _, s := range []string{"### Copy probe", "m = 32", "controlled gain", "raw gain", "| gain | d = 16 (3) | d = 63 (1) |",
		"| alibi | 3 seeds | controlled | " + estimateText(wantCtl) + " |",
		"| alibi | 3 seeds | raw | " + estimateText(wantRaw) + " |",
		"| rope | 1 seed | controlled | " + copyCellText(one, one.control) + " |",
		"| rope | 1 seed | raw | " + copyCellText(one, one.raw) + " |", "(1.300 to 1.500)",
		"| xpos | 1 seed | controlled | - | - |\n| xpos | 1 seed | raw | " + copyCellText(old, old.raw) + " |", PlotCopyProbe} {
		if !strings.Contains(md, s) {
			t.Errorf("the section lacks %q:\n%s", s, md)
		}
	}
	if c, r := strings.Index(md, "| alibi | 3 seeds | controlled"), strings.Index(md, "| alibi | 3 seeds | raw"); c < 0 || r < c {
		t.Errorf("the controlled row does not lead the raw one:\n%s", md)
	}
	t.Log("\n" + md)

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "results"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyProbePlot(vs, filepath.Join(dir, PlotCopyProbe)); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, PlotCopyProbe)); err != nil || st.Size() == 0 {
		t.Errorf("no plot: %v", err)
	}

	var none strings.Builder
	noProbe := []*variantData{{name: "nope", variant: "nope", eval: &evaluate.Result{Variant: "nope"}}}
	renderCopyProbe(&none, noProbe)
	if none.Len() != 0 || copyProbePlot(noProbe, filepath.Join(dir, "none.png")) != nil {
		t.Errorf("results without a probe render %q", none.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "none.png")); err == nil {
		t.Errorf("a plot without a probe")
	}
}

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

// copyFixture: alibi at three seeds, rope at one; gaps 16 (3 probes) and
// 63 (1 probe). Gains differ by seed, probe and gap, so that a cell read
// from another gap, or probes pooled over seeds, give other numbers.
func copyFixture() []*variantData {
	run := func(variant string, seed int) *variantData {
		cp := &evaluate.CopyProbe{M: 32}
		for k, d := range []int{16, 63} {
			g := evaluate.CopyGap{D: d, Probes: 3 - 2*k}
			for i := range g.Probes {
				first := 5 + 0.1*float64(i)
				second := first - (1 + 0.3*float64(seed) + 0.05*float64(i*i) - 0.5*float64(k))
				g.FirstLoss, g.SecondLoss = append(g.FirstLoss, first), append(g.SecondLoss, second)
				g.Gain = append(g.Gain, first-second)
			}
			g.MeanGain = stats.Mean(g.Gain)
			cp.Gaps = append(cp.Gaps, g)
		}
		res := &evaluate.Result{Format: evaluate.FormatVersion, Variant: variant, Protocol: evaluate.Config{Context: 16}, Copy: cp}
		return &variantData{name: variant, variant: variant, seed: uint64(seed), eval: res}
	}
	return []*variantData{run("alibi", 1), run("alibi", 2), run("alibi", 3), run("rope", 1)}
}

// TestCopyProbeSection: with three seeds a cell is the t interval over
// the seeds' mean gains (not over the nine probes pooled); with one seed
// the mean over its probes and their range; the table has a column per
// gap and the plot is written.
func TestCopyProbeSection(t *testing.T) {
	vs := copyFixture()
	rows := copyGains(vs)
	if len(rows) != 2 || rows[0].variant != "alibi" || rows[1].variant != "rope" || len(rows[0].cells) != 2 {
		t.Fatalf("rows %+v: want alibi and rope, two gaps each", rows)
	}
	var means, pooled []float64
	for _, v := range vs[:3] {
		g := v.eval.Copy.Gaps[0].Gain
		means = append(means, stats.Mean(g))
		pooled = append(pooled, g...)
	}
	want := stats.SeedsT(means)
	got := rows[0].cells[0]
	if got.d != 16 || got.seeds != 3 || got.probes != 3 || got.gain.Mean != want.Mean || got.gain.Lo != want.Lo || got.gain.Hi != want.Hi || got.gain.Covers != "seeds" {
		t.Errorf("alibi at 16: %+v, want SeedsT %+v", got, want)
	}
	if p := stats.WindowT(pooled); math.Abs(p.Hi-got.gain.Hi) < 1e-9 {
		t.Errorf("the nine probes pooled give the same interval: the check cannot fail")
	}
	rope := vs[3].eval.Copy.Gaps[0].Gain
	one := rows[1].cells[0]
	if one.seeds != 1 || !math.IsNaN(one.gain.Lo) || one.gain.Mean != stats.Mean(rope) || one.min != slices.Min(rope) || one.max != slices.Max(rope) {
		t.Errorf("rope at 16: %+v, want the mean %v and range of %v", one, stats.Mean(rope), rope)
	}

	var b strings.Builder
	renderCopyProbe(&b, vs)
	md := b.String()
	for _, s := range []string{"### Copy probe", "m = 32", "| d = 16 (3) | d = 63 (1) |", "| alibi | 3 seeds | " + estimateText(want) + " |",
		"| rope | 1 seed | " + copyCellText(one) + " |", "(1.300 to 1.500)", PlotCopyProbe} {
		if !strings.Contains(md, s) {
			t.Errorf("the section lacks %q:\n%s", s, md)
		}
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
	old := []*variantData{{name: "nope", variant: "nope", eval: &evaluate.Result{Variant: "nope"}}}
	renderCopyProbe(&none, old)
	if none.Len() != 0 || copyProbePlot(old, filepath.Join(dir, "none.png")) != nil {
		t.Errorf("results without a probe render %q", none.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "none.png")); err == nil {
		t.Errorf("a plot without a probe")
	}
}

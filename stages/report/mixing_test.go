package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"routebench/stages/evaluate"
)

// mixingResult is a synthetic eval.json with a route mixing window at
// T = 128, 8T and 128T: c(n) = decay^n on the grid 1, 2, 4, ..., L/2.
func mixingResult(variant, kind string, median float64, decay float64) *evaluate.Result {
	const T = 128
	r := &evaluate.Result{Variant: variant, Profile: "test", Protocol: evaluate.Config{Variant: variant, Context: T}}
	r.Mixing = &evaluate.RouteMixing{Kind: kind, Threshold: 0.1, Windows: 2, Design: "synthetic routes"}
	for _, m := range []int{1, 8, 16, 128} {
		l := evaluate.RouteMixingLength{L: m * T}
		c := 1.0
		for n := 1; n < m*T; n *= 2 {
			l.Grid = append(l.Grid, n)
			l.Curve = append(l.Curve, c)
			l.Noise = append(l.Noise, 0.01)
			c *= decay
		}
		l.CurveWindow = int(median) + 1
		l.Window = evaluate.WindowSummary{Count: 16, Median: median, Max: 2 * int(max(median, 1)), Found: 0.75}
		l.PredictedWindow = evaluate.WindowSummary{Count: 16, Median: 2 * median, Max: 100, Found: 1}
		r.Mixing.Lengths = append(r.Mixing.Lengths, l)
	}
	return r
}

// TestRenderRouteMixing renders the section and the SVG from synthetic
// results: one row per variant, two seeds of random-qk as a median with
// its spread, a window not found shown as "none", no row for a run
// without route_mixing; and nothing at all when no run has one.
func TestRenderRouteMixing(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "results"), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	nope := &variantData{name: "nope", variant: "nope", eval: madeResult("nope", at(iv(1, 1, 1), iv(1, 1, 1)), nil)}
	if err := renderRouteMixing(&b, []*variantData{nope}, dir); err != nil {
		t.Fatal(err)
	}
	if b.Len() != 0 {
		t.Fatalf("a profile without route mixing got a section:\n%s", b.String())
	}
	if _, err := os.Stat(filepath.Join(dir, PlotMixing)); err == nil {
		t.Fatalf("a profile without route mixing got a plot")
	}
	vs := []*variantData{
		nope,
		{name: "random-qk", variant: "random-qk", seed: 1, eval: mixingResult("random-qk", "so2", 13, 0.5)},
		{name: "random-qk@seed2", variant: "random-qk", seed: 2, eval: mixingResult("random-qk", "so2", 17, 0.6)},
		{name: "path", variant: "path", eval: mixingResult("path", "path", -1, 0.99)},
		{name: "rope", variant: "rope", eval: mixingResult("rope", "rope", -1, 1)},
	}
	if err := renderRouteMixing(&b, vs, dir); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"## The route's mixing window in the trained models",
		"| variant | kind | seeds | n* at T | n* at 8T | n* at 16T | n* at 128T | predicted n* at 128T | n* of the mean curve at 128T | noise of c at the longest n |",
		"| random-qk | so2 | 2 | 15 [13 .. 17] (max 34; 75% found) |",
		"| 30 [26 .. 34] (max 100; 100% found) |",
		"| path | path | 1 | none (max 2; 75% found) |",
		"Routes: synthetic routes.",
		"| 16 [14 .. 18] | 0.010 |",
		"| rope | rope | 1 | none (max 2; 75% found) |",
	} {
		if !strings.Contains(strings.ToLower(out), strings.ToLower(want)) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "| nope |") {
		t.Errorf("a run without route mixing got a row:\n%s", out)
	}
	svg, err := os.ReadFile(filepath.Join(dir, PlotMixing))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), "<svg") || !strings.Contains(string(svg), "random-qk (mean of 2 seeds)") {
		t.Errorf("the plot is not an SVG with the seed-averaged random-qk line (%d bytes)", len(svg))
	}
}

// TestMixingPlotWindow: the plotted n* of a summed curve compares each sum
// with the threshold times the number of curves.
func TestMixingPlotWindow(t *testing.T) {
	grid := []int{1, 2, 4, 8}
	if n, ok := windowOf([]float64{2, 1, 0.25, 0.1}, grid, 0.2); !ok || n != 5 {
		t.Errorf("window %d (%v), want 5: the sum 0.25 at n = 4 is above 2 x 0.1", n, ok)
	}
	if _, ok := windowOf([]float64{2, 1, 0.25, 0.2}, grid, 0.2); ok {
		t.Errorf("a window found with the last sum at the threshold")
	}
}

// TestMedianRouteWindow: M3's reading of a run's n*: the median at L,
// censored when the median is not found, an error without the length or
// without route mixing.
func TestMedianRouteWindow(t *testing.T) {
	r := mixingResult("random-qk", "so2", 13, 0.5)
	if n, ok, err := medianRouteWindow(r, 16*128); err != nil || !ok || n != 13 {
		t.Errorf("median n* at 16T: %v, %v, %v; want 13, found", n, ok, err)
	}
	if _, ok, err := medianRouteWindow(mixingResult("path", "path", -1, 0.99), 128*128); err != nil || ok {
		t.Errorf("a censored median: found %v (%v), want not found", ok, err)
	}
	if _, _, err := medianRouteWindow(r, 4*128); err == nil {
		t.Errorf("no error for a length without a route window")
	}
	if _, _, err := medianRouteWindow(madeResult("rope", at(iv(1, 1, 1), iv(1, 1, 1)), nil), 128); err == nil {
		t.Errorf("no error for a result without route mixing")
	}
}

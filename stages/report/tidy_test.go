package report

import (
	"bytes"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"routebench/modelspec"
	"routebench/stages/evaluate"
)

func tidyFixture() (Config, []*variantData) {
	lr := func(L int, losses, prefix []float64) evaluate.LengthResult {
		p := iv(1.05, 1.01, 1.09)
		return evaluate.LengthResult{L: L, PPL: iv(3, 2.5, 3.5), Ratio: iv(1.1, 1, 1.2), PrefixRatio: &p,
			WindowLoss: losses, PrefixLoss: prefix, Entropy: 0.7,
			FarMass: []evaluate.FarMass{{Distance: 4, Heads: 8, Mean: 0.2, HeadMin: 0.1, HeadMax: 0.4}, {Distance: 16, Heads: 0}}}
	}
	res := &evaluate.Result{Variant: "rope", Format: evaluate.CopyControlFormat, Protocol: evaluate.Config{Context: 8},
		Lengths: []evaluate.LengthResult{lr(8, []float64{1, 2}, []float64{1, 2}), lr(16, []float64{1.5, 2.5}, []float64{1, 2})},
		Protocols: []evaluate.ProtocolResult{{Protocol: "sliding:4", Lengths: []evaluate.LengthResult{
			{L: 16, PPL: iv(2, 1.9, 2.1), Ratio: iv(1, 0.9, 1.1), WindowLoss: []float64{0.5, 0.6}}}}},
		PositionCurve: &evaluate.PositionCurve{L: 16, Bins: []evaluate.PositionBin{{Start: 1, End: 2}, {Start: 2, End: 17}},
			WindowLoss: [][]float64{{4, 3}, {5, 2}}},
		Mechanism: &evaluate.Mechanism{Far: 8, Lengths: []evaluate.MechanismLength{{L: 8}, {L: 16, FarMass: []float64{0.1, 0.2},
			FarCoherence: []float64{0.3, 0.4}, FarCoherenceWeighted: []float64{0.5, 0.6}, Bound: []float64{0.7, 0.8}}}},
		Copy: &evaluate.CopyProbe{Gaps: []evaluate.CopyGap{{D: 64, Gain: []float64{0.5, 0.7, 0.9}, ControlGain: []float64{0.1, 0.2, 0.3}}}},
	}
	res.Lengths[1].ContextGain = &evaluate.ContextGain{Gain: []float64{0.2, 0.4}, Share: []float64{0.1, 0.3}}
	other := &evaluate.Result{Variant: "rope", Corpus: "wiki", Protocol: evaluate.Config{Context: 8},
		Lengths: []evaluate.LengthResult{lr(8, []float64{3}, []float64{3})}}
	cfg := Config{Profile: "test", Variants: []string{"rope"}, Commit: "abc123", EvalCorpora: []string{"wiki"}}
	return cfg, []*variantData{{name: "rope", variant: "rope", seed: 2, eval: res, corpora: map[string]*evaluate.Result{"wiki": other}}}
}

// findRow is the one row with these coordinates (parameters none unless
// set by the caller's match).
func findRow(t *testing.T, rs []tidyRow, match func(r tidyRow) bool, what string) tidyRow {
	t.Helper()
	var got []tidyRow
	for _, r := range rs {
		if match(r) {
			got = append(got, r)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d rows for %s, want 1: %+v", len(got), what, got)
	}
	return got[0]
}

// Every measured value appears once, at its level, keyed by its
// coordinates with its parameters as columns, and with its interval and
// what the interval covers where it has one.
func TestTidyRows(t *testing.T) {
	cfg, vs := tidyFixture()
	rs := tidyRows(tidySet(cfg, vs))
	levels := map[string]int{}
	for _, r := range rs {
		levels[r.Level]++
		if strings.ContainsAny(r.Metric, "@") {
			t.Errorf("metric %q holds a parameter in its name", r.Metric)
		}
		if (r.Level == LevelWindow) != (r.Window != none) || (r.Level == LevelAll) != (r.Seeds != none) {
			t.Errorf("level %s with window %d and n_seeds %d: %+v", r.Level, r.Window, r.Seeds, r)
		}
		if (r.Interval == "") != math.IsNaN(r.Lo) || math.IsNaN(r.Lo) != math.IsNaN(r.Hi) {
			t.Errorf("bounds without an interval or the reverse: %+v", r)
		}
	}
	// Seed level: per primary length ppl, ratio, prefix_ratio, entropy,
	// far_mass at 4 (16 has no heads) = 5, at 16 also context_gain and its
	// share = 7; sliding: ppl, ratio = 2; 2 position bins; the mechanism
	// probe at 16 (T has none): far_mass_probe, far_coherence, its
	// weighted twin and the bound = 4; copy_gain and copy_gain_controlled
	// = 2; wiki: 5. Total 5 + 7 + 2 + 2 + 4 + 2 + 5 = 27. Windows: 2 x
	// (2 + 2) window and prefix losses, 2 context gains and 2 shares, 2
	// sliding, 2 x 2 position bins, 4 x 2 mechanism, 2 x 3 copy probes,
	// wiki 1 + 1 = 8 + 4 + 2 + 4 + 8 + 6 + 2 = 34. All: one per seed row.
	if want := map[string]int{LevelSeed: 27, LevelWindow: 34, LevelAll: 27}; !reflect.DeepEqual(levels, want) {
		t.Fatalf("rows by level %v, want %v", levels, want)
	}
	at := func(level, corpus, protocol string, L int, metric string, window int) func(tidyRow) bool {
		return func(r tidyRow) bool {
			return r.Level == level && r.Corpus == corpus && r.Protocol == protocol && r.L == L && r.Metric == metric && r.Window == window
		}
	}
	if r := findRow(t, rs, at(LevelSeed, HeldOutCorpus, "random", 16, "ppl", none), "ppl at 16"); r.Value != 3 || r.Lo != 2.5 || r.Hi != 3.5 ||
		r.Interval != ivWindows || r.T != 8 || r.Seed != 2 || r.Variant != "rope" || r.Distance != none || r.Gap != none {
		t.Errorf("ppl row %+v", r)
	}
	if r := findRow(t, rs, at(LevelWindow, HeldOutCorpus, "random", 16, "window_loss", 1), "window 1 at 16"); r.Value != 2.5 || !math.IsNaN(r.Lo) || r.Interval != "" {
		t.Errorf("window row %+v", r)
	}
	if r := findRow(t, rs, at(LevelSeed, HeldOutCorpus, "random", 8, "far_mass", none), "far mass at 8"); r.Distance != 4 || r.Value != 0.2 ||
		r.Lo != 0.1 || r.Hi != 0.4 || r.Interval != ivHeads {
		t.Errorf("far-mass row %+v", r)
	}
	if r := findRow(t, rs, at(LevelWindow, HeldOutCorpus, "sliding:4", 16, "window_loss", 0), "sliding window 0"); r.Value != 0.5 {
		t.Errorf("sliding row %+v", r)
	}
	if r := findRow(t, rs, at(LevelWindow, "wiki", "random", 8, "window_loss", 0), "wiki window 0"); r.Value != 3 {
		t.Errorf("eval-corpus row %+v", r)
	}
	bin := findRow(t, rs, func(r tidyRow) bool { return r.Level == LevelSeed && r.Metric == "position_loss" && r.PosStart == 2 }, "position bin [2, 17)")
	if bin.PosEnd != 17 || bin.L != 16 || bin.Value != 2.5 || bin.Interval != ivWindows {
		t.Errorf("position row %+v", bin)
	}
	cp := findRow(t, rs, func(r tidyRow) bool {
		return r.Level == LevelWindow && r.Metric == "copy_gain_controlled" && r.Window == 2
	}, "copy probe 2")
	if cp.Gap != 64 || cp.L != none || cp.Value != 0.3 {
		t.Errorf("copy probe row: the gap belongs in gap, L is none: %+v", cp)
	}
	if r := findRow(t, rs, at(LevelSeed, HeldOutCorpus, "random", 16, "far_coherence_weighted", none), "weighted coherence"); r.Distance != 8 ||
		math.Abs(r.Value-0.55) > 1e-15 || r.Interval != ivWindows {
		t.Errorf("weighted coherence row: distance the probe's far threshold, the mean over windows: %+v", r)
	}
	for _, r := range rs {
		if r.Protocol == "sliding:4" && (r.Metric == "attention_entropy" || r.Metric == "prefix_ratio") {
			t.Errorf("a further protocol has a %s row, which only the primary protocol measures", r.Metric)
		}
		if r.Metric == "copy_gain" && (r.Gap == none || r.L != none) || !strings.HasPrefix(r.Metric, "far_") && r.Distance != none {
			t.Errorf("parameters in the wrong place: %+v", r)
		}
	}
}

// The LevelAll rows against a reference computed here: two seeds of ppl
// by the geometric mean with the log-scale t interval, t(1) = 12.7062 at
// 95%; a loss by the arithmetic mean; an n* one seed did not find stays
// -1; a one-seed figure keeps its value and interval. The arithmetic mean
// of the perplexities (a plausible mistake) differs from the reference
// by far more than the tolerance, so the check can fail.
func TestAcrossSeeds(t *testing.T) {
	row := func(seed uint64, metric string, v float64) tidyRow {
		return tidyRow{Level: LevelSeed, Variant: "rope", Seed: seed, Corpus: HeldOutCorpus, Protocol: "random", T: 8, L: 16, Metric: metric,
			Distance: none, PosStart: none, PosEnd: none, Gap: none, Window: none, Seeds: none, Value: v, Lo: v - 1, Hi: v + 1, Interval: ivWindows}
	}
	one := row(1, "context_gain", 0.3)
	one.Variant = "alibi"
	rs := []tidyRow{row(1, "ppl", 4), row(1, "position_loss", 2), row(1, "route_window_median", 10), one,
		row(2, "ppl", 9), row(2, "position_loss", 3), row(2, "route_window_median", -1)}
	rs = append(rs, tidyRow{Level: LevelWindow, Metric: "window_loss", Window: 0, Value: 100})
	all := acrossSeeds(rs)
	if len(all) != 4 {
		t.Fatalf("%d LevelAll rows, want 4 (ppl, position_loss, n*, alibi's gain): %+v", len(all), all)
	}
	const t1 = 12.706204736174707 // Student's t, 1 degree of freedom, 0.975
	logs := []float64{math.Log(4), math.Log(9)}
	m, sd := (logs[0]+logs[1])/2, math.Abs(logs[0]-logs[1])/math.Sqrt2
	ppl := all[0]
	want := tidyRow{Level: LevelAll, Variant: "rope", Corpus: HeldOutCorpus, Protocol: "random", T: 8, L: 16, Metric: "ppl",
		Distance: none, PosStart: none, PosEnd: none, Gap: none, Window: none, Seeds: 2, Value: 6,
		Lo: math.Exp(m - t1*sd/math.Sqrt2), Hi: math.Exp(m + t1*sd/math.Sqrt2), Interval: ivSeedsLog}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Abs(b) }
	if !close(ppl.Value, want.Value) || !close(ppl.Lo, want.Lo) || !close(ppl.Hi, want.Hi) {
		t.Errorf("ppl over seeds %g [%g, %g], want %g [%g, %g]", ppl.Value, ppl.Lo, ppl.Hi, want.Value, want.Lo, want.Hi)
	}
	ppl.Value, ppl.Lo, ppl.Hi = want.Value, want.Lo, want.Hi
	if ppl != want {
		t.Errorf("ppl over seeds %+v, want %+v", ppl, want)
	}
	if arith := (4.0 + 9) / 2; close(arith, all[0].Value) {
		t.Errorf("control: the arithmetic mean %g is not told apart from the geometric", arith)
	}
	if p := all[1]; !close(p.Value, 2.5) || !close(p.Hi, 2.5+t1*0.5) || p.Interval != ivSeeds || p.Seeds != 2 {
		t.Errorf("position_loss over seeds %+v, want 2.5 +- %g", p, t1*0.5)
	}
	if n := all[2]; n.Value != -1 || !math.IsNaN(n.Lo) || n.Interval != "" {
		t.Errorf("an n* one seed did not find: %+v, want -1 without an interval", n)
	}
	if a := all[3]; a.Variant != "alibi" || a.Value != 0.3 || a.Lo != -0.7 || a.Interval != ivWindows || a.Seeds != 1 {
		t.Errorf("one seed: %+v, want its own value and interval", a)
	}
}

// The Parquet file reads back as the table written: names, types, which
// columns are nullable, every value and every null; two writes of the
// same rows give the same bytes; the interval column is null, never "",
// on a row without one.
func TestTidyParquetRoundTrip(t *testing.T) {
	cfg, vs := tidyFixture()
	tb := tidyTable(tidyRows(tidySet(cfg, vs)), false)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	if err := writeParquetTable(a, tb); err != nil {
		t.Fatal(err)
	}
	if err := writeParquetTable(b, tidyTable(tidyRows(tidySet(cfg, vs)), false)); err != nil {
		t.Fatal(err)
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) {
		t.Errorf("two writes of the same rows differ")
	}
	back, err := readParquetTable(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameTable(back, tb); err != nil {
		t.Error(err)
	}
	// Control: a table that differs in one value is told apart.
	mut := *back
	mut.cols = append([]column(nil), back.cols...)
	v := &mut.cols[len(mut.cols)-4] // value
	v.f = append([]float64(nil), v.f...)
	v.f[3] += 1e-9
	if sameTable(&mut, tb) == nil {
		t.Error("control: a value moved by 1e-9 is not told apart")
	}
	iv := back.cols[len(back.cols)-1]
	if iv.name != "interval" || !iv.nullable {
		t.Fatalf("last column %s (nullable %v), want a nullable interval", iv.name, iv.nullable)
	}
	nulls := 0
	for k := range iv.nulls {
		if iv.nulls[k] {
			nulls++
		} else if iv.s[k] == "" {
			t.Errorf("row %d: interval is \"\", not null", k)
		}
	}
	if nulls == 0 {
		t.Error("no null interval: the fixture's window rows have none")
	}
}

// sameTable says where two tables differ: a column's name, type or
// nullability, a value or a null.
func sameTable(got, want *table) error {
	if len(got.cols) != len(want.cols) || got.rows() != want.rows() || got.about != want.about {
		return fmt.Errorf("table %d columns x %d rows (%q), want %d x %d (%q)", len(got.cols), got.rows(), got.about, len(want.cols), want.rows(), want.about)
	}
	for k := range want.cols {
		g, w := got.cols[k], want.cols[k]
		if g.name != w.name || !arrowEqual(g, w) || g.nullable != w.nullable {
			return fmt.Errorf("column %d: %s %s nullable %v, want %s %s nullable %v", k, g.name, g.typ, g.nullable, w.name, w.typ, w.nullable)
		}
		for i := range want.rows() {
			if g.nulls[i] != w.nulls[i] || g.text(i) != w.text(i) {
				return fmt.Errorf("column %s row %d: %q (null %v), want %q (null %v)", w.name, i, g.text(i), g.nulls[i], w.text(i), w.nulls[i])
			}
		}
	}
	return nil
}

func arrowEqual(a, b column) bool { return a.typ.ID() == b.typ.ID() }

// A table with a null in a required column is refused, naming the
// column, and nothing is written.
func TestTableRefusesNullInRequired(t *testing.T) {
	cfg, vs := tidyFixture()
	tb := tidyTable(tidyRows(tidySet(cfg, vs)), false)
	tb.cols[1].nulls[2] = true // variant
	path := filepath.Join(t.TempDir(), "t.parquet")
	err := writeParquetTable(path, tb)
	if err == nil || !strings.Contains(err.Error(), "variant") || !strings.Contains(err.Error(), "row 2") {
		t.Fatalf("err = %v, want one naming row 2 and the variant column", err)
	}
	if _, serr := os.Stat(path); serr == nil {
		t.Error("the refused table was written")
	}
}

// The training curves: every step's train_loss and grad_norm and every
// evaluation's heldout_loss, steps from 1; runs without train.json are
// skipped.
func TestCurvesTable(t *testing.T) {
	tr := &modelspec.TrainReport{Config: modelspec.Config{Context: 8}, TrainLoss: []float64{5, 4, 3}, GradNorm: []float64{1, 0.5, 0.25},
		Eval: []modelspec.EvalPoint{{Step: 2, Loss: 4.5}, {Step: 3, Loss: 3.5}}}
	vs := []*variantData{{variant: "rope", seed: 3, train: tr}, {variant: "alibi"}}
	tb := curvesTable(tidySet(Config{Commit: "c1"}, vs))
	if tb.rows() != 8 {
		t.Fatalf("%d rows, want 3 + 3 + 2", tb.rows())
	}
	path := filepath.Join(t.TempDir(), "c.csv")
	if err := writeCSVTable(path, tb); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, line := range []string{"variant,seed,T,step,metric,value\n", "rope,3,8,1,train_loss,5\n", "rope,3,8,3,grad_norm,0.25\n", "rope,3,8,2,heldout_loss,4.5\n"} {
		if !bytes.Contains(data, []byte(line)) {
			t.Errorf("train_curves.csv lacks %q:\n%s", line, data)
		}
	}
}

// A sweep's tables lead with the point column; WriteTidyTables writes
// the two Parquet tables and the commit line, and TablesToCSV writes each
// table's CSV beside it from the Parquet alone, equal to the CSV of the
// table as built.
func TestTidySweepTablesAndCSV(t *testing.T) {
	cfg, vs := tidyFixture()
	set := tidySet(cfg, vs)
	set.Sweep = true
	set.Runs[0].Point = "sigma_min=0.2,steps=4"
	set.Runs[0].Train = &modelspec.TrainReport{Config: modelspec.Config{Context: 8}, TrainLoss: []float64{2}, GradNorm: []float64{1}}
	dir := t.TempDir()
	study := filepath.Join(dir, "study-x")
	os.MkdirAll(study, 0o755)
	if err := WriteTidyTables(study, set); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "csv")
	wrote, err := TablesToCSV(dir, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(wrote) != 2 {
		t.Fatalf("wrote %v, want the two tables' CSV", wrote)
	}
	for _, f := range []struct {
		name string
		t    *table
		row  string
	}{
		{"tidy.csv", tidyTable(tidyRows(set), true), "\"sigma_min=0.2,steps=4\",seed,rope,2,heldout,random,8,8,ppl,,,,,,,3,2.5,3.5,t95:windows\n"},
		{"train_curves.csv", curvesTable(set), "\"sigma_min=0.2,steps=4\",rope,2,8,1,train_loss,2\n"},
	} {
		got, err := os.ReadFile(filepath.Join(out, "study-x", f.name))
		if err != nil {
			t.Fatal(err)
		}
		ref := filepath.Join(dir, "ref.csv")
		if err := writeCSVTable(ref, f.t); err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(ref)
		if !bytes.Equal(got, want) {
			t.Errorf("%s from the Parquet differs from the table's own CSV", f.name)
		}
		if !bytes.HasPrefix(got, []byte("point,")) || !bytes.Contains(got, []byte("\n"+f.row)) {
			t.Errorf("%s lacks the point column or row %q:\n%.600s", f.name, f.row, got)
		}
	}
	if c, _ := os.ReadFile(filepath.Join(study, commitBase)); string(c) != "abc123\n" {
		t.Errorf("%s = %q, want the commit line", commitBase, c)
	}
	if _, err := TablesToCSV(out, filepath.Join(dir, "again")); err == nil || !strings.Contains(err.Error(), "no tidy.parquet") {
		t.Errorf("a folder without tables: err = %v, want one that says so", err)
	}
	broken := filepath.Join(dir, "broken")
	os.MkdirAll(broken, 0o755)
	os.WriteFile(filepath.Join(broken, "tidy.parquet"), []byte("PAR1 not a table PAR1"), 0o644)
	if _, err := TablesToCSV(broken, broken); err == nil || !strings.Contains(err.Error(), filepath.Join(broken, "tidy.parquet")) {
		t.Errorf("a corrupt table: err = %v, want one naming the file", err)
	}
}

// The commit lives in the sidecar line only: the tables of two commits
// are byte for byte the same, the sidecar differs (the control: the
// comparison sees a difference where there is one), and a rewrite at one
// commit changes no byte at all.
func TestTablesCommitOnlyInSidecar(t *testing.T) {
	cfg, vs := tidyFixture()
	vs[0].train = &modelspec.TrainReport{Config: modelspec.Config{Context: 8}, TrainLoss: []float64{2, 1}, GradNorm: []float64{1, 1}}
	write := func(commit string) string {
		c := cfg
		c.Commit = commit
		dir := t.TempDir()
		if err := WriteTidyTables(dir, tidySet(c, vs)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	a, a2, b := write("v1-abc"), write("v1-abc"), write("v2-def-dirty")
	if d := diffDirs(a, a2); len(d) != 0 {
		t.Errorf("a rewrite at one commit changed %v", d)
	}
	if d := diffDirs(a, b); !reflect.DeepEqual(d, []string{commitBase}) {
		t.Errorf("another commit changed %v, want only %s", d, commitBase)
	}
}

// The schema docs/interop.md states is the one the tables have: every
// column of tidy.parquet and of train_curves.parquet in order, its type
// and whether it is nullable, read from the doc's two column tables. A
// schema with interval required (as before issue 54) is told apart.
func TestTidySchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/interop.md")
	if err != nil {
		t.Fatal(err)
	}
	documented, err := documentedSchemas(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	var tidy []string
	for _, c := range tidyColumns {
		tidy = append(tidy, schemaLine(c.name, c.typ, c.nullable))
	}
	var curves []string
	for _, c := range curvesTable(TidySet{}).cols {
		curves = append(curves, schemaLine(c.name, c.typ, c.nullable))
	}
	for k, want := range [][]string{tidy, curves} {
		if k >= len(documented) {
			t.Fatalf("docs/interop.md has %d column tables in its tables section, want 2 (tidy.parquet, train_curves.parquet)", len(documented))
		}
		if !reflect.DeepEqual(documented[k], want) {
			t.Errorf("docs/interop.md's column table %d documents\n  %s\nthe table has\n  %s", k+1, strings.Join(documented[k], "\n  "), strings.Join(want, "\n  "))
		}
	}
	mut := append([]string(nil), tidy...)
	mut[len(mut)-1] = schemaLine("interval", tString, false)
	if reflect.DeepEqual(documented[0], mut) {
		t.Error("control: a required interval column is not told apart")
	}
}

// schemaLine is a column as the docs name it: "seed uint64 nullable".
func schemaLine(name string, typ arrow.DataType, nullable bool) string {
	s := name + " " + map[arrow.Type]string{arrow.STRING: "string", arrow.UINT64: "uint64", arrow.INT64: "int64", arrow.FLOAT64: "float64"}[typ.ID()]
	if nullable {
		s += " nullable"
	}
	return s
}

// documentedSchemas reads the column tables ("| column | type | meaning |")
// of docs/interop.md's tables section (from its "## Tidy results" heading
// to the next "## "): per table, one schemaLine per column; a row naming
// two columns (`lo`, `hi`) gives both.
func documentedSchemas(doc string) ([][]string, error) {
	start := strings.Index(doc, "\n## Tidy results")
	if start < 0 {
		return nil, fmt.Errorf("docs/interop.md has no \"## Tidy results\" section")
	}
	sec := doc[start+1:]
	if end := strings.Index(sec[3:], "\n## "); end >= 0 {
		sec = sec[:end+3]
	}
	var out [][]string
	in := false
	for _, line := range strings.Split(sec, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		switch {
		case strings.HasPrefix(line, "| column | type |"):
			in = true
			out = append(out, nil)
		case !strings.HasPrefix(line, "|"):
			in = false
		case in && len(cells) >= 2 && !strings.HasPrefix(cells[0], "---"):
			typ := strings.TrimSpace(cells[1])
			nullable := strings.HasSuffix(typ, ", nullable")
			typ = strings.TrimSuffix(typ, ", nullable")
			for _, name := range strings.Split(cells[0], ",") {
				name = strings.Trim(strings.TrimSpace(name), "`")
				s := name + " " + typ
				if nullable {
					s += " nullable"
				}
				out[len(out)-1] = append(out[len(out)-1], s)
			}
		}
	}
	return out, nil
}

// diffDirs lists the files (relative paths, sorted) that differ between
// two folders: in one only, or with other bytes.
func diffDirs(a, b string) []string {
	read := func(root string) map[string][]byte {
		m := map[string][]byte{}
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(root, path)
				m[rel], _ = os.ReadFile(path)
			}
			return nil
		})
		return m
	}
	ma, mb := read(a), read(b)
	var out []string
	for k, v := range ma {
		if w, ok := mb[k]; !ok || !bytes.Equal(v, w) {
			out = append(out, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

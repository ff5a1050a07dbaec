package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"routebench/modelspec"
	"routebench/stages/evaluate"
)

func writeTidyCSV(path string, rs []tidyRow) error { return writeCSVTable(path, tidyTable(rs, false)) }
func writeTidyParquet(path string, rs []tidyRow) error {
	return writeParquetTable(path, tidyTable(rs, false))
}

func tidyFixture() (Config, []*variantData) {
	lr := func(L int, losses, prefix []float64) evaluate.LengthResult {
		p := iv(1.05, 1.01, 1.09)
		return evaluate.LengthResult{L: L, PPL: iv(3, 2.5, 3.5), Ratio: iv(1.1, 1, 1.2), PrefixRatio: &p,
			WindowLoss: losses, PrefixLoss: prefix, Entropy: 0.7,
			FarMass: []evaluate.FarMass{{Distance: 4, Heads: 8, Mean: 0.2, HeadMin: 0.1, HeadMax: 0.4}, {Distance: 16, Heads: 0}}}
	}
	res := &evaluate.Result{Variant: "rope", Protocol: evaluate.Config{Context: 8},
		Lengths: []evaluate.LengthResult{lr(8, []float64{1, 2}, []float64{1, 2}), lr(16, []float64{1.5, 2.5}, []float64{1, 2})},
		Protocols: []evaluate.ProtocolResult{{Protocol: "sliding:4", Lengths: []evaluate.LengthResult{
			{L: 16, PPL: iv(2, 1.9, 2.1), Ratio: iv(1, 0.9, 1.1), WindowLoss: []float64{0.5, 0.6}}}}},
	}
	other := &evaluate.Result{Variant: "rope", Corpus: "wiki", Protocol: evaluate.Config{Context: 8},
		Lengths: []evaluate.LengthResult{lr(8, []float64{3}, []float64{3})}}
	cfg := Config{Profile: "test", Variants: []string{"rope"}, Commit: "abc123", EvalCorpora: []string{"wiki"}}
	return cfg, []*variantData{{name: "rope", variant: "rope", seed: 2, eval: res, corpora: map[string]*evaluate.Result{"wiki": other}}}
}

// Every measured value appears once, keyed by its coordinates, with its
// interval and what the interval covers where it has one.
func TestTidyRows(t *testing.T) {
	cfg, vs := tidyFixture()
	rs := tidyRows(tidySet(cfg, vs))
	// per primary length: ppl, ratio, prefix_ratio, entropy, far_mass@4
	// (@16 has no heads), 2 window and 2 prefix losses = 9; the sliding
	// length: ppl, ratio, 2 window losses = 4; wiki: 5 + 1 + 1 = 7.
	if len(rs) != 9+9+4+7 {
		t.Fatalf("%d rows, want 29: %+v", len(rs), rs)
	}
	find := func(corpus, protocol string, L, window int, metric string) tidyRow {
		t.Helper()
		for _, r := range rs {
			if r.Corpus == corpus && r.Protocol == protocol && r.L == L && r.Window == window && r.Metric == metric {
				return r
			}
		}
		t.Fatalf("no row %s %s L=%d window %d %s", corpus, protocol, L, window, metric)
		return tidyRow{}
	}
	if r := find(HeldOutCorpus, "random", 16, -1, "ppl"); r.Value != 3 || r.Lo != 2.5 || r.Hi != 3.5 || r.Interval != ivWindows ||
		r.T != 8 || r.Seed != 2 || r.Commit != "abc123" || r.Variant != "rope" {
		t.Errorf("ppl row %+v", r)
	}
	if r := find(HeldOutCorpus, "random", 16, 1, "window_loss"); r.Value != 2.5 || !math.IsNaN(r.Lo) || r.Interval != "" {
		t.Errorf("window row %+v", r)
	}
	if r := find(HeldOutCorpus, "random", 8, -1, "far_mass@4"); r.Value != 0.2 || r.Lo != 0.1 || r.Hi != 0.4 || r.Interval != ivHeads {
		t.Errorf("far-mass row %+v", r)
	}
	if r := find(HeldOutCorpus, "sliding:4", 16, 0, "window_loss"); r.Value != 0.5 {
		t.Errorf("sliding row %+v", r)
	}
	if r := find("wiki", "random", 8, 0, "window_loss"); r.Value != 3 {
		t.Errorf("eval-corpus row %+v", r)
	}
	for _, r := range rs {
		if r.Protocol == "sliding:4" && (r.Metric == "attention_entropy" || r.Metric == "prefix_ratio") {
			t.Errorf("a further protocol has a %s row, which only the primary protocol measures", r.Metric)
		}
	}
}

// The Parquet file holds the CSV's rows, nulls where the CSV is empty,
// and both files are byte-identical for identical inputs.
func TestTidyParquetMatchesCSV(t *testing.T) {
	cfg, vs := tidyFixture()
	dir := t.TempDir()
	csvPath, pqPath := filepath.Join(dir, "tidy.csv"), filepath.Join(dir, "tidy.parquet")
	rs := tidyRows(tidySet(cfg, vs))
	if err := writeTidyCSV(csvPath, rs); err != nil {
		t.Fatal(err)
	}
	if err := writeTidyParquet(pqPath, rs); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{csvPath, pqPath} {
		first, _ := os.ReadFile(p)
		again := p + ".again"
		var err error
		if p == csvPath {
			err = writeTidyCSV(again, tidyRows(tidySet(cfg, vs)))
		} else {
			err = writeTidyParquet(again, tidyRows(tidySet(cfg, vs)))
		}
		if err != nil {
			t.Fatal(err)
		}
		second, _ := os.ReadFile(again)
		if !bytes.Equal(first, second) {
			t.Errorf("%s: two writes of the same rows differ", filepath.Base(p))
		}
	}
	checkParquetMatchesCSV(t, csvPath, pqPath)
}

// checkParquetMatchesCSV reads both files back and compares every cell.
func checkParquetMatchesCSV(t *testing.T, csvPath, pqPath string) {
	t.Helper()
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := file.OpenParquetFile(pqPath, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if int(tbl.NumRows()) != len(recs)-1 || int(tbl.NumCols()) != len(recs[0]) {
		t.Fatalf("parquet %d x %d, csv %d rows x %d", tbl.NumRows(), tbl.NumCols(), len(recs)-1, len(recs[0]))
	}
	for c := range recs[0] {
		if got := tbl.Schema().Field(c).Name; got != recs[0][c] {
			t.Errorf("column %d: parquet %s, csv %s", c, got, recs[0][c])
		}
		col := tbl.Column(c).Data().Chunk(0)
		for i := 0; i < col.Len(); i++ {
			want := recs[i+1][c]
			var got string
			switch a := col.(type) {
			case *array.String:
				got = a.Value(i)
			case *array.Uint64:
				got = strconv.FormatUint(a.Value(i), 10)
			case *array.Int64:
				got = strconv.FormatInt(a.Value(i), 10)
			case *array.Float64:
				got = strconv.FormatFloat(a.Value(i), 'g', -1, 64)
			}
			if col.IsNull(i) {
				got = ""
			}
			if got != want {
				t.Errorf("row %d column %s: parquet %q, csv %q", i, recs[0][c], got, want)
			}
		}
	}
}

// The training curves: every step's train_loss and grad_norm and every
// evaluation's heldout_loss, steps from 1; runs without train.json are
// skipped; the Parquet file holds the CSV's rows.
func TestCurvesTable(t *testing.T) {
	tr := &modelspec.TrainReport{Config: modelspec.Config{Context: 8}, TrainLoss: []float64{5, 4, 3}, GradNorm: []float64{1, 0.5, 0.25},
		Eval: []modelspec.EvalPoint{{Step: 2, Loss: 4.5}, {Step: 3, Loss: 3.5}}}
	vs := []*variantData{{variant: "rope", seed: 3, train: tr}, {variant: "alibi"}}
	tb := curvesTable(tidySet(Config{Commit: "c1"}, vs))
	if tb.rows() != 8 {
		t.Fatalf("%d rows, want 3 + 3 + 2", tb.rows())
	}
	dir := t.TempDir()
	csvPath, pqPath := filepath.Join(dir, "c.csv"), filepath.Join(dir, "c.parquet")
	if err := writeCSVTable(csvPath, tb); err != nil {
		t.Fatal(err)
	}
	if err := writeParquetTable(pqPath, tb); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(csvPath)
	for _, line := range []string{"variant,seed,T,step,metric,value,commit\n", "rope,3,8,1,train_loss,5,c1\n", "rope,3,8,3,grad_norm,0.25,c1\n", "rope,3,8,2,heldout_loss,4.5,c1\n"} {
		if !bytes.Contains(data, []byte(line)) {
			t.Errorf("train_curves.csv lacks %q:\n%s", line, data)
		}
	}
	checkParquetMatchesCSV(t, csvPath, pqPath)
}

// A sweep's tables lead with the point column; WriteTidyTables writes
// all four files.
func TestTidySweepHasPointColumn(t *testing.T) {
	cfg, vs := tidyFixture()
	set := tidySet(cfg, vs)
	set.Sweep = true
	set.Runs[0].Point = "sigma_min=0.2"
	set.Runs[0].Train = &modelspec.TrainReport{Config: modelspec.Config{Context: 8}, TrainLoss: []float64{2}, GradNorm: []float64{1}}
	dir := t.TempDir()
	if err := WriteTidyTables(dir, set); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ name, head, row string }{
		{"tidy.csv", "point,variant,seed,", "sigma_min=0.2,rope,2,heldout,random,8,8,,ppl,"},
		{"train_curves.csv", "point,variant,seed,T,step,", "sigma_min=0.2,rope,2,8,1,train_loss,2,abc123"},
	} {
		data, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte(f.head)) || !bytes.Contains(data, []byte("\n"+f.row)) {
			t.Errorf("%s lacks the point column or row %q:\n%.400s", f.name, f.row, data)
		}
	}
	checkParquetMatchesCSV(t, filepath.Join(dir, "tidy.csv"), filepath.Join(dir, "tidy.parquet"))
	checkParquetMatchesCSV(t, filepath.Join(dir, "train_curves.csv"), filepath.Join(dir, "train_curves.parquet"))
}

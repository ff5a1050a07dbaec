package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"routebench/modelspec"
	"routebench/stages/evaluate"
	"routebench/stages/report"
	"routebench/stats"
)

func writeTestTables(t *testing.T, dir string) {
	t.Helper()
	res := &evaluate.Result{Variant: "rope", Protocol: evaluate.Config{Context: 8}, Lengths: []evaluate.LengthResult{
		{L: 8, PPL: stats.Interval{Value: 3, Lo: 2, Hi: 4}, Ratio: stats.Interval{Value: 1, Lo: 1, Hi: 1}, WindowLoss: []float64{1, 1.2}}}}
	set := report.TidySet{Commit: "abc", Runs: []report.TidyRun{{Variant: "rope", Seed: 1, Eval: res,
		Train: &modelspec.TrainReport{Config: modelspec.Config{Context: 8}, TrainLoss: []float64{2}, GradNorm: []float64{1}}}}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteTidyTables(dir, set); err != nil {
		t.Fatal(err)
	}
}

// `routebench tables` writes each table's CSV under --out at the table's
// relative path, the flag before or after the folder; a folder without
// tables is an error that says what to name.
func TestTablesCommand(t *testing.T) {
	src := t.TempDir()
	writeTestTables(t, filepath.Join(src, "study-x"))
	for _, args := range [][]string{{"--out", "OUT", src}, {src, "--out", "OUT"}} {
		out := filepath.Join(t.TempDir(), "csv")
		for i := range args {
			args[i] = strings.Replace(args[i], "OUT", out, 1)
		}
		if err := cmdTables(args); err != nil {
			t.Fatal(err)
		}
		for name, head := range map[string]string{"tidy.csv": "level,variant,seed,", "train_curves.csv": "variant,seed,T,step,"} {
			data, err := os.ReadFile(filepath.Join(out, "study-x", name))
			if err != nil || !strings.HasPrefix(string(data), head) {
				t.Errorf("%v: %s = %.80q (%v), want a table starting %q", args, name, data, err, head)
			}
		}
	}
	if err := cmdTables([]string{t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no tidy.parquet") {
		t.Errorf("an empty folder: err = %v", err)
	}
	if err := cmdTables([]string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "one results folder") {
		t.Errorf("two folders: err = %v", err)
	}
}

// An export that writes tidy.parquet removes the CSV twins beside it and
// nothing else; an export that wrote no table (the control) removes
// nothing.
func TestExportRemovesStaleCSV(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"tidy.csv", "train_curves.csv", "results.csv"} {
		os.WriteFile(filepath.Join(dir, f), []byte("old"), 0o644)
	}
	if err := removeStaleTables([]string{filepath.Join(dir, "plot.png")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tidy.csv")); err != nil {
		t.Fatalf("control: an export without tables removed tidy.csv: %v", err)
	}
	if err := removeStaleTables([]string{filepath.Join(dir, "plot.png"), filepath.Join(dir, "tidy.parquet")}); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{"tidy.csv": false, "train_curves.csv": false, "results.csv": true} {
		if _, err := os.Stat(filepath.Join(dir, f)); (err == nil) != want {
			t.Errorf("%s present %v, want %v", f, err == nil, want)
		}
	}
}

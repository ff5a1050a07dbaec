package planner

import (
	"bytes"
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"

	"routebench/artifacts"
	"routebench/pipeline"
	"routebench/stages/report"
)

// The report's tables do not rewrite themselves (issue 53): on a cached
// store, a rerun of the report at the same commit leaves every byte of
// results/ as it was, and a rerun at another commit label changes one
// file of results/, the tables' commit line (RESULTS.md, outside
// results/, names the commit too). The second comparison is the
// control: it shows the comparison sees a file that differs.
func TestReportRerunKeepsResults(t *testing.T) {
	needCorpus(t)
	store := t.TempDir()
	if err := runPlan(store, nil); err != nil {
		t.Fatal(err)
	}
	s, err := artifacts.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	// results runs the report (forced) at a commit label and returns the
	// files of its results/ folder.
	results := func(commit string) map[string][]byte {
		t.Helper()
		plan, err := Build(testProfile())
		if err != nil {
			t.Fatal(err)
		}
		st, _ := plan.Stage(ReportStage)
		cfg := st.Config.(report.Config)
		cfg.Commit = commit
		st.Config, st.Run = cfg, report.Stage(cfg, report.Inputs{}).Run
		r := &pipeline.Runner{Store: s, Log: &bytes.Buffer{}, Force: map[string]bool{ReportStage: true}}
		res, err := r.Run(context.Background(), plan)
		if err != nil {
			t.Fatal(err)
		}
		art := res.Artifacts[ReportStage]
		files := map[string][]byte{}
		for _, name := range art.Names() {
			if strings.HasPrefix(name, "results/") {
				if files[name], err = art.ReadFile(name); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, ok := files[report.TidyParquetFile]; !ok {
			t.Fatalf("the report wrote no %s: %v", report.TidyParquetFile, art.Names())
		}
		return files
	}
	a, again, b := results("v1-test"), results("v1-test"), results("v2-test-dirty")
	if d := changed(a, again); len(d) != 0 {
		t.Errorf("a rerun of the report at the same commit changed %v", d)
	}
	if d := changed(a, b); !reflect.DeepEqual(d, []string{report.TablesCommit}) {
		t.Errorf("a rerun at another commit changed %v, want only %s", d, report.TablesCommit)
	}
	if got := string(b[report.TablesCommit]); got != "v2-test-dirty\n" {
		t.Errorf("%s = %q, want the commit line", report.TablesCommit, got)
	}
	// results/ as committed stays small (issue 53: <= 5 MB for the cpu
	// profile's; this reduced smoke run's is 0.75 MB, its plots most of it).
	total := 0
	for _, data := range a {
		total += len(data)
	}
	if total > 5<<20 {
		t.Errorf("results/ holds %d bytes, over 5 MiB", total)
	}
	t.Logf("results/: %d files, %d bytes (%s: %d, %s: %d)", len(a), total, report.TidyParquetFile, len(a[report.TidyParquetFile]),
		report.CurvesParquetFile, len(a[report.CurvesParquetFile]))
}

// changed lists the files, sorted, in one map only or with other bytes.
func changed(a, b map[string][]byte) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

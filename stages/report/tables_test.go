package report

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"routebench/stats"
)

// results.csv carries both ratios: the paired prefix ratio of a format-2
// evaluation, NaN where the evaluation has none.
func TestCSVCarriesThePrefixRatio(t *testing.T) {
	withPrefix := madeResult("rope", map[int]stats.Interval{1: iv(1, 1, 1), 2: iv(1.2, 1.1, 1.3)}, nil)
	p := iv(1.05, 1.01, 1.09)
	withPrefix.Lengths[1].PrefixRatio = &p
	vs := []*variantData{{name: "rope", variant: "rope", seed: 1, eval: withPrefix}}
	path := filepath.Join(t.TempDir(), "results.csv")
	if err := writeCSV(path, rows(vs)); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want a header and 2 rows", len(recs))
	}
	for _, tc := range []struct {
		row           int
		ratio, prefix string
	}{{1, "1", "NaN"}, {2, "1.2", "1.05"}} {
		r := recs[tc.row]
		if r[col["ratio"]] != tc.ratio || r[col["prefix_ratio"]] != tc.prefix {
			t.Errorf("row %d: ratio %s prefix_ratio %s, want %s and %s", tc.row, r[col["ratio"]], r[col["prefix_ratio"]], tc.ratio, tc.prefix)
		}
	}
	if got := recs[2][col["prefix_ratio_lo"]] + " " + recs[2][col["prefix_ratio_hi"]]; got != "1.01 1.09" {
		t.Errorf("prefix interval %q, want 1.01 1.09", got)
	}
}

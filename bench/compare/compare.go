// Package compare prints a benchstat-style comparison of two benchmark
// files (Go's benchfmt format), using golang.org/x/perf's benchfmt,
// benchproc and benchmath as libraries: medians with 95% intervals, the
// Mann-Whitney U test (AssumeNothing) for "did it change", and a geomean
// row per unit. It never decides pass/fail; it reports.
package compare

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
	"golang.org/x/perf/benchunit"
)

// Confidence is the level of the reported intervals.
const Confidence = 0.95

// sample is every value of one benchmark in one unit in one file.
type sample struct{ values []float64 }

// table holds, per unit, per benchmark row, the samples of the old and new file.
type table struct {
	units []string
	rows  map[string][]benchproc.Key
	cells map[string]map[benchproc.Key]*[2]sample
}

// Files compares two benchmark files by path and writes the table to w.
func Files(w io.Writer, oldPath, newPath string) error {
	var t table
	t.rows = map[string][]benchproc.Key{}
	t.cells = map[string]map[benchproc.Key]*[2]sample{}
	var pp benchproc.ProjectionParser
	rowBy, err := pp.Parse(".fullname", nil)
	if err != nil {
		return err
	}
	configs := [2]map[string]string{}
	for side, path := range []string{oldPath, newPath} {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("bench compare: %w", err)
		}
		n, cfg, err := t.read(f, path, side, rowBy)
		f.Close()
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("bench compare: %s holds no benchmark results (is it `go test -bench` output?)", path)
		}
		configs[side] = cfg
	}
	fmt.Fprintf(w, "old: %s (%s)\nnew: %s (%s)\n", oldPath, describe(configs[0]), newPath, describe(configs[1]))
	for _, unit := range t.units {
		t.writeUnit(w, unit)
	}
	return nil
}

func describe(cfg map[string]string) string {
	var parts []string
	for _, k := range []string{"commit", "cpu", "goos", "goarch"} {
		if v := cfg[k]; v != "" {
			parts = append(parts, k+": "+strings.TrimSpace(v))
		}
	}
	return strings.Join(parts, ", ")
}

func (t *table) read(r io.Reader, name string, side int, rowBy *benchproc.Projection) (int, map[string]string, error) {
	rd := benchfmt.NewReader(r, name)
	n := 0
	cfg := map[string]string{}
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		for _, c := range res.Config {
			cfg[c.Key] = string(c.Value)
		}
		n++
		row := rowBy.Project(res)
		for _, v := range res.Values {
			unit := v.Unit
			if _, ok := t.cells[unit]; !ok {
				t.units = append(t.units, unit)
				t.cells[unit] = map[benchproc.Key]*[2]sample{}
			}
			cell, ok := t.cells[unit][row]
			if !ok {
				cell = &[2]sample{}
				t.cells[unit][row] = cell
				t.rows[unit] = append(t.rows[unit], row)
			}
			cell[side].values = append(cell[side].values, v.Value)
		}
	}
	if err := rd.Err(); err != nil {
		return n, cfg, fmt.Errorf("bench compare: reading %s: %w", name, err)
	}
	return n, cfg, nil
}

func (t *table) writeUnit(w io.Writer, unit string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\n")
	fmt.Fprintf(tw, "%s\told median\t±\tnew median\t±\tdelta\tp (n)\t\n", unit)
	rows := t.rows[unit]
	benchproc.SortKeys(rows)
	var logOld, logNew float64
	nGeo := 0
	cls := benchunit.ClassOf(unit)
	for _, row := range rows {
		cell := t.cells[unit][row]
		s0 := benchmath.NewSample(cell[0].values, &benchmath.DefaultThresholds)
		s1 := benchmath.NewSample(cell[1].values, &benchmath.DefaultThresholds)
		old, new := "-", "-"
		oldCI, newCI := "", ""
		var sum0, sum1 benchmath.Summary
		if len(s0.Values) > 0 {
			sum0 = benchmath.AssumeNothing.Summary(s0, Confidence)
			old, oldCI = benchunit.Scale(sum0.Center, cls), sum0.PctRangeString()
		}
		if len(s1.Values) > 0 {
			sum1 = benchmath.AssumeNothing.Summary(s1, Confidence)
			new, newCI = benchunit.Scale(sum1.Center, cls), sum1.PctRangeString()
		}
		delta, p := "", ""
		if len(s0.Values) > 0 && len(s1.Values) > 0 {
			cmp := benchmath.AssumeNothing.Compare(s0, s1)
			delta, p = cmp.FormatDelta(sum0.Center, sum1.Center), cmp.String()
			if sum0.Center > 0 && sum1.Center > 0 {
				logOld += math.Log(sum0.Center)
				logNew += math.Log(sum1.Center)
				nGeo++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.StringValues(), old, oldCI, new, newCI, delta, p)
	}
	if nGeo > 1 {
		g0, g1 := math.Exp(logOld/float64(nGeo)), math.Exp(logNew/float64(nGeo))
		fmt.Fprintf(tw, "geomean\t%s\t\t%s\t\t%+.2f%%\t\t\n", benchunit.Scale(g0, cls), benchunit.Scale(g1, cls), 100*(g1/g0-1))
	}
	tw.Flush()
}

package compare

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchfmt"
)

// PeakRow is the benchmark whose median GFLOP/s is the yardstick of
// Summary: OpenBLAS's sgemm on both cores on a 2048^3 product
// (bench/openblas).
const PeakRow = "Sgemm/impl=openblas-2t/peak/2048x2048x2048"

// Summary writes, for every benchmark of the file at path that reports
// GFLOP/s, its median, range and n, and the median's ratio to the same
// file's PeakRow median: one run's "fraction of the sgemm peak". A file
// without the peak row is an error that says how to produce one.
func Summary(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("bench summary: %w", err)
	}
	defer f.Close()
	rd := benchfmt.NewReader(f, path)
	vals := map[string][]float64{}
	var rows []string
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		v, ok := res.Value("GFLOP/s")
		if !ok {
			continue
		}
		name := strings.TrimPrefix(string(res.Name.Full()), "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 && strings.Trim(name[i+1:], "0123456789") == "" && i+1 < len(name) {
			name = name[:i] // the GOMAXPROCS suffix
		}
		if _, seen := vals[name]; !seen {
			rows = append(rows, name)
		}
		vals[name] = append(vals[name], v)
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("bench summary: reading %s: %w", path, err)
	}
	peak, ok := vals[PeakRow]
	if !ok {
		return fmt.Errorf("bench summary: %s has no %s row to divide by: run the OpenBLAS benchmark in the same run (go test -tags noxla,openblas -bench Sgemm ./bench/openblas/, or make bench-speed)", path, PeakRow)
	}
	p := median(peak)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "benchmark\tGFLOP/s median\tmin\tmax\tn\t/ OpenBLAS 2t peak (%.1f)\t\n", p)
	for _, r := range rows {
		xs := vals[r]
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%d\t%.3f\t\n", r, median(xs), slices.Min(xs), slices.Max(xs), len(xs), median(xs)/p)
	}
	return tw.Flush()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

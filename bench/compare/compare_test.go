package compare

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeBench(t *testing.T, name, commit string, nsop []float64) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "commit: %s\ngoos: linux\ngoarch: amd64\ncpu: test\n", commit)
	for _, v := range nsop {
		fmt.Fprintf(&b, "BenchmarkAttention/variant=rope/L=1024-2 \t 10\t %.0f ns/op\t %.1f GFLOP/s\n", v, 1e4/v)
		fmt.Fprintf(&b, "BenchmarkAttention/variant=alibi/L=1024-2 \t 10\t %.0f ns/op\t %.1f GFLOP/s\n", 2*v, 1e4/(2*v))
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompareReportsSignificantChange(t *testing.T) {
	old := writeBench(t, "old.txt", "aaa", []float64{1000, 1010, 990, 1005, 995, 1002, 998, 1001, 999, 1003})
	faster := writeBench(t, "new.txt", "bbb", []float64{500, 505, 495, 502, 498, 501, 499, 500, 503, 497})
	var out bytes.Buffer
	if err := Files(&out, old, faster); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"commit: aaa", "commit: bbb", "sec/op", "GFLOP/s", "-50.", "+100.", "p=0.000", "geomean", "variant=rope/L=1024"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	// Same data: no significant change ("~").
	out.Reset()
	if err := Files(&out, old, old); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "~") {
		t.Errorf("identical files not reported as unchanged:\n%s", out.String())
	}
}

func TestCompareRejectsEmptyFile(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.txt")
	os.WriteFile(empty, []byte("not a benchmark\n"), 0o644)
	old := writeBench(t, "old.txt", "aaa", []float64{1, 2, 3})
	if err := Files(&bytes.Buffer{}, old, empty); err == nil || !strings.Contains(err.Error(), "no benchmark results") {
		t.Fatalf("got %v", err)
	}
}

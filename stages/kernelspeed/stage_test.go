package kernelspeed

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"routebench/pipeline"
)

// The stage measures the GEMM reference and every flavour at every length
// and writes one table row each with positive wall-clock and per-CPU-second
// throughputs and a fraction of the reference (the figures themselves are
// machine-dependent and are not asserted).
func TestStageMeasuresEveryFlavour(t *testing.T) {
	cfg := NewConfig([]int{130}, 1)
	out := t.TempDir()
	rc := &pipeline.RunContext{Context: context.Background(), Stage: Stage(cfg), OutDir: out, WorkDir: t.TempDir(),
		Logf: t.Logf, Progress: func(int64, int64, string) {}}
	if err := run(rc, cfg); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Peak: the native GEMM on a 2048\^3 product in the same stage, ([0-9.]+) GFLOP/s \(([0-9.]+) per CPU-second`).FindSubmatch(md)
	if m == nil {
		t.Fatalf("no peak in\n%s", md)
	}
	for _, g := range m[1:] {
		if v, _ := strconv.ParseFloat(string(g), 64); v <= 0 {
			t.Errorf("peak %s, want > 0", g)
		}
	}
	for _, f := range flavours {
		m := regexp.MustCompile(`\| ` + regexp.QuoteMeta(f.name) + ` \| 130 \| ([0-9.]+) \| ([0-9.]+) \| ([0-9]+) \| ([0-9.]+)% \|`).FindSubmatch(md)
		if m == nil {
			t.Errorf("no row for %s at L=130 in\n%s", f.name, md)
			continue
		}
		for i, col := range []string{"GFLOP/s", "GFLOP per CPU-s", "tokens/s", "% of peak"} {
			if g, _ := strconv.ParseFloat(string(m[i+1]), 64); g <= 0 {
				t.Errorf("%s: %s %s, want > 0", f.name, col, m[i+1])
			}
		}
	}
	if err := run(rc, NewConfig(nil, 1)); err == nil {
		t.Error("no lengths: want an error")
	}
}

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

// The stage measures every flavour at every length and writes one table
// row each with a positive throughput (the figures themselves are
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
	for _, f := range flavours {
		m := regexp.MustCompile(`\| ` + regexp.QuoteMeta(f.name) + ` \| 130 \| ([0-9.]+) \|`).FindSubmatch(md)
		if m == nil {
			t.Errorf("no row for %s at L=130 in\n%s", f.name, md)
			continue
		}
		if g, _ := strconv.ParseFloat(string(m[1]), 64); g <= 0 {
			t.Errorf("%s: GFLOP/s %s, want > 0", f.name, m[1])
		}
	}
	if err := run(rc, NewConfig(nil, 1)); err == nil {
		t.Error("no lengths: want an error")
	}
}

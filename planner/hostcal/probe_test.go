package hostcal

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The probe measures this host in seconds and gives figures a calibration
// accepts, in the order the kernels allow: streaming attention (softmax
// and rotations between its products) below the GEMM's peak.
func TestProbe(t *testing.T) {
	if testing.Short() {
		t.Skip("times the kernels for a few seconds")
	}
	start := time.Now()
	s, err := Probe()
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %+v in %s", Current(), s, took.Round(time.Millisecond))
	if s.AttentionGFLOPs > 1.2*s.GemmGFLOPs {
		t.Errorf("attention %.1f GFLOP/s above the GEMM's peak %.1f: the probe's flop counts are off", s.AttentionGFLOPs, s.GemmGFLOPs)
	}
	if took > probeBudget+time.Minute {
		t.Errorf("the probe took %s, want about %s at most", took, probeBudget)
	}
}

// No stage, model or pipeline package imports hostcal: a probe's figures
// must never reach a stage's config or code salt.
func TestNoStageImportsHostcal(t *testing.T) {
	const self = "routebench/planner/hostcal"
	for _, root := range []string{"../../stages", "../../model", "../../modelspec", "../../pipeline", "../../artifacts"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, im := range f.Imports {
				if p, _ := strconv.Unquote(im.Path.Value); p == self {
					t.Errorf("%s imports %s (planner/hostcal's package doc)", path, self)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walking %s: %v", root, err)
		}
	}
}

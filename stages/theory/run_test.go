package theory

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRunSmoke runs the whole stage at smoke sizes twice, with different
// worker counts, and requires byte-identical outputs (JSON, markdown, PNG).
func TestRunSmoke(t *testing.T) {
	cfg := SmokeConfig()
	dirA, dirB := t.TempDir(), t.TempDir()
	start := time.Now()
	var calls int64
	sum, err := Run(context.Background(), cfg, dirA, func(done, total int64, note string) {
		calls++
		if done > total || note == "" {
			t.Errorf("progress %d/%d %q", done, total, note)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("smoke run: %v, %d progress calls", time.Since(start), calls)
	for _, c := range sum.Checks {
		t.Logf("%s: %s", c.Name, c.Verdict)
		for _, cr := range c.Criteria {
			if !cr.Pass {
				t.Logf("  FAIL %s: %s", cr.Name, cr.Detail)
			}
		}
	}
	if !sum.Pass {
		t.Errorf("smoke config does not pass")
	}
	if calls == 0 {
		t.Errorf("progress never called")
	}
	cfg.Workers = 1
	if _, err := Run(context.Background(), cfg, dirB, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range sum.Files {
		a, err := os.ReadFile(filepath.Join(dirA, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dirB, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between runs with the same seed", name)
		}
	}
}

// TestRunCPU runs the cpu profile into $THEORY_CPU_OUT (skipped otherwise):
// go test -run TestRunCPU -timeout 30m ./stages/theory/ with THEORY_CPU_OUT=dir.
func TestRunCPU(t *testing.T) {
	out := os.Getenv("THEORY_CPU_OUT")
	if out == "" {
		t.Skip("set THEORY_CPU_OUT to run the cpu profile")
	}
	start := time.Now()
	sum, err := Run(context.Background(), CPUConfig(), out, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cpu run: %v", time.Since(start))
	for _, c := range sum.Checks {
		t.Logf("%s: %s", c.Name, c.Verdict)
		for _, cr := range c.Criteria {
			t.Logf("  %s %s: %s", verdict(cr.Pass), cr.Name, cr.Detail)
		}
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, SmokeConfig(), t.TempDir(), nil); err == nil {
		t.Fatal("Run with a cancelled context returned no error")
	}
}

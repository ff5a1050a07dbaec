package theory

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	for _, f := range verdictFailures(sum) {
		t.Errorf("smoke config: %s", f)
	}
	if calls == 0 {
		t.Errorf("progress never called")
	}
	md, err := os.ReadFile(filepath.Join(dirA, "theory.md"))
	if err != nil {
		t.Fatal(err)
	}
	// RESULTS.md's theory section: per check the empirical criteria, the
	// identities apart, and each control failing as it must.
	if n, want := strings.Count(string(md), "Empirical criteria ("), len(sum.Checks); n != want {
		t.Errorf("theory.md has %d empirical-criteria lists, want %d", n, want)
	}
	if n, want := strings.Count(string(md), "Identities (true by construction"), len(sum.Checks); n != want {
		t.Errorf("theory.md has %d identity lists, want %d", n, want)
	}
	for _, c := range sum.Checks {
		for _, ct := range c.Controls {
			if want := fmt.Sprintf("**%s** (%s) fails \"%s\", as it must", ct.Name, ct.Law, ct.Criterion); !strings.Contains(string(md), want) {
				t.Errorf("theory.md lacks %q", want)
			}
		}
		for _, cr := range c.Criteria {
			if cr.Kind != Empirical || cr.Shows == "" {
				t.Errorf("check %s: criterion %q listed as evidence is %s / says nothing it shows", c.Name, cr.Name, cr.Kind)
			}
		}
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

// TestRunCPU runs the cpu profile (what make reproduce's theory stage runs)
// and requires every check the stage reports to PASS: the four checks, each
// with criteria, every criterion and every mixing family's criterion. Full
// mode only (about 35 s on 2 cores); the outputs go to $THEORY_CPU_OUT when
// set (go test -run TestRunCPU ./stages/theory/ with THEORY_CPU_OUT=dir),
// else to a temporary directory.
func TestRunCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("the cpu profile takes about 35 s; full mode only")
	}
	out := os.Getenv("THEORY_CPU_OUT")
	if out == "" {
		out = t.TempDir()
	}
	start := time.Now()
	sum, err := Run(context.Background(), CPUConfig(), out, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cpu run: %v", time.Since(start))
	for _, c := range sum.Checks {
		t.Logf("%s: %s", c.Name, c.Verdict)
	}
	for _, f := range verdictFailures(sum) {
		t.Errorf("cpu profile: %s", f)
	}
}

// wantChecks are the checks a Summary must carry (checkSummaries).
var wantChecks = []string{"mixing", "concentration", "farmass", "incoherence", "path"}

// verdictFailures lists what keeps a summary from a full PASS: a missing
// check or one without criteria, a FAIL verdict, a failing criterion (of a
// check or of a mixing family), or an overall FAIL. Empty: all passed.
func verdictFailures(sum *Summary) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range sum.Checks {
		seen[c.Name] = true
		if len(c.Criteria) == 0 {
			out = append(out, fmt.Sprintf("check %s has no criteria", c.Name))
		}
		if !c.Pass || c.Verdict != "PASS" {
			out = append(out, fmt.Sprintf("check %s: %s", c.Name, c.Verdict))
		}
		for _, cr := range append(append([]Criterion(nil), c.Criteria...), c.Identities...) {
			if !cr.Pass {
				out = append(out, fmt.Sprintf("check %s: FAIL %s: %s", c.Name, cr.Name, cr.Detail))
			}
		}
		if len(c.Controls) == 0 {
			out = append(out, fmt.Sprintf("check %s has no control", c.Name))
		}
		for _, ct := range c.Controls {
			if !ct.AsItMust {
				out = append(out, fmt.Sprintf("check %s: control %s passed %q: %s", c.Name, ct.Name, ct.Criterion, ct.Detail))
			}
		}
	}
	for _, name := range wantChecks {
		if !seen[name] {
			out = append(out, fmt.Sprintf("check %s missing from the summary", name))
		}
	}
	if sum.Mixing != nil {
		for _, f := range sum.Mixing.Families {
			for _, cr := range f.Criteria {
				if !cr.Pass {
					out = append(out, fmt.Sprintf("mixing family %s: FAIL %s: %s", f.Family.Name, cr.Name, cr.Detail))
				}
			}
		}
	}
	if !sum.Pass {
		out = append(out, "overall verdict FAIL")
	}
	return out
}

// TestVerdictFailuresSeeABrokenCheck is TestRunCPU's mutation check: a
// whole stage run (smoke sizes) with a step family that has no spectral gap
// (identity steps) must be reported, by the mixing check and the family's
// spectral-gap criterion.
func TestVerdictFailuresSeeABrokenCheck(t *testing.T) {
	cfg := SmokeConfig()
	cfg.Mixing.Families = append(cfg.Mixing.Families, StepFamily{Name: "id", Kind: "identity", Dim: 4})
	sum, err := Run(context.Background(), cfg, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(verdictFailures(sum), "\n")
	for _, want := range []string{"check mixing: FAIL", "mixing family id: FAIL spectral gap", "overall verdict FAIL"} {
		if !strings.Contains(got, want) {
			t.Errorf("identity steps: failures do not name %q; got:\n%s", want, got)
		}
	}
	if strings.Contains(got, "check farmass") {
		t.Errorf("identity mixing steps failed the far-mass check too:\n%s", got)
	}
	t.Logf("identity steps reported as:\n%s", got)
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, SmokeConfig(), t.TempDir(), nil); err == nil {
		t.Fatal("Run with a cancelled context returned no error")
	}
}

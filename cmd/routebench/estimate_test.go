package main

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// plan prints an estimate per stage and the total, and --json carries the
// same figures: every stage priced, the total their sum, nothing cached so
// all of it to run, the core count stated.
func TestPlanEstimates(t *testing.T) {
	dir := t.TempDir()
	corpus := docsCorpus(t, dir, 200)
	args := []string{"--profile", "smoke", "--corpus", corpus, "--set", "variants=rope,path", "--store", filepath.Join(dir, "store")}
	out := planFor(t, args...)
	var sum float64
	for _, s := range out.Stages {
		if s.EstimateSec <= 0 || s.EstimateCal != "built-in" {
			t.Errorf("%s: estimate %v s (%q), want > 0 s, built-in on an empty store", s.Name, s.EstimateSec, s.EstimateCal)
		}
		sum += s.EstimateSec
	}
	e := out.Estimate
	if math.Abs(e.TotalSec-sum) > 1e-9*sum || e.ToRunSec != e.TotalSec || e.Cores < 1 || !strings.Contains(e.Assumption, "one after another") {
		t.Errorf("estimate %+v: want total = to run = the stages' sum %v, the cores and the assumption stated", e, sum)
	}
	var buf bytes.Buffer
	if err := writePlan(&buf, args); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"estimated wall time per stage:", "train/path ", "evaluate/rope ", "estimate: ", "for every stage cold", fmt.Sprintf("GOMAXPROCS=%d", e.Cores), "calibration built-in"} {
		if !strings.Contains(text, want) {
			t.Errorf("plan output lacks %q:\n%s", want, text)
		}
	}
}

// plan --sweep prices a sweep's stages by the same code: every point's
// stages and the study.
func TestPlanEstimatesSweep(t *testing.T) {
	file, store := sweepFixture(t)
	out := planFor(t, "--sweep", file, "--store", store)
	kinds := map[string]bool{}
	for _, s := range out.Stages {
		if s.EstimateSec <= 0 {
			t.Errorf("%s: estimate %v s, want > 0", s.Name, s.EstimateSec)
		}
		kinds[s.Kind] = true
	}
	if !kinds["train"] || !kinds["evaluate"] || !kinds["study"] || out.Estimate.TotalSec <= 0 {
		t.Errorf("sweep plan: kinds %v, total %v s; want train, evaluate and study stages priced", kinds, out.Estimate.TotalSec)
	}
}

// reproduce and sweep open with the estimate's line (runAll prints it
// before the plan runs).
func TestRunEstimateLine(t *testing.T) {
	file, store := sweepFixture(t)
	_, r, plan, err := parseAndSetup("sweep", []string{"--sweep", file, "--store", store}, false)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeRunEstimate(&buf, "", r, plan)
	if line := buf.String(); !strings.HasPrefix(line, plan.Profile+": estimate: ") || !strings.Contains(line, "to run now") || strings.Count(line, "\n") != 1 {
		t.Errorf("run estimate line %q: want one line %q...", line, plan.Profile+": estimate: ")
	}
}

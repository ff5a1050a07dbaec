package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"routebench/planner/cost"
	"routebench/planner/hostcal"
)

// The package's tests price with the built-in constants: a probe in every
// test that plans would cost seconds each and write the user's cache.
// The tests below seed a calibration of their own.
func TestMain(m *testing.M) {
	os.Setenv(hostcal.DirEnv, hostcal.Off)
	os.Exit(m.Run())
}

// seedCalibration caches speeds as this host's calibration in a fresh
// directory and points the process at it, so that plan reads it instead of
// probing.
func seedCalibration(t *testing.T, speeds cost.Speeds, openblas *hostcal.Sgemm) string {
	t.Helper()
	dir := t.TempDir()
	e := hostcal.Entry{Format: hostcal.Format, Host: hostcal.Current(), Speeds: speeds, OpenBLAS: openblas, Measured: time.Now().UTC()}
	p, err := hostcal.Save(dir, e)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(hostcal.DirEnv, dir)
	return p
}

// plan prices with this host's cached calibration, names it on every stage
// and in --json's host, and a host whose training step takes twice as long
// gets train and stepspeed stages twice as long, every other the same.
func TestPlanHostCalibration(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--profile", "smoke", "--corpus", docsCorpus(t, dir, 200), "--set", "variants=rope", "--store", filepath.Join(dir, "store")}
	ref := cost.Reference
	path := seedCalibration(t, ref, nil)
	one := planFor(t, args...)
	if h := one.Estimate.Host; h == nil || h.Speeds != ref || !h.Cached || h.Path != path {
		t.Fatalf("plan --json host %+v, want the seeded calibration from %s", h, path)
	}
	if one.Estimate.Budget != nil {
		t.Errorf("smoke profile: budget %+v, want none (the budget is the cpu profile's)", one.Estimate.Budget)
	}
	slow := ref
	slow.StepSec *= 2
	seedCalibration(t, slow, nil)
	two := planFor(t, args...)
	for i, s := range two.Stages {
		if s.EstimateCal != "host probe" {
			t.Errorf("%s: calibration %q, want host probe", s.Name, s.EstimateCal)
		}
		want := one.Stages[i].EstimateSec
		if s.Kind == "train" || s.Kind == "stepspeed" {
			want *= 2
		}
		if math.Abs(s.EstimateSec-want) > 1e-9*want {
			t.Errorf("%s: %v s with the step twice as long, want %v", s.Name, s.EstimateSec, want)
		}
	}
	var buf bytes.Buffer
	if err := writePlan(&buf, args); err != nil {
		t.Fatal(err)
	}
	if text := buf.String(); !strings.Contains(text, "host calibration: "+hostcal.Current().String()) || !strings.Contains(text, "calibration host probe") {
		t.Errorf("plan's text names no host calibration:\n%s", text)
	}
	// --builtin-cost ignores it.
	if b := planFor(t, append(args, "--builtin-cost")...); b.Estimate.Host != nil || b.Stages[0].EstimateCal != "built-in" {
		t.Errorf("--builtin-cost: host %+v, calibration %q; want none, built-in", b.Estimate.Host, b.Stages[0].EstimateCal)
	}
}

// The cpu profile's budget: cold time x (OpenBLAS's peak / 400) against 90
// minutes, with the native GEMM standing in, said so, where OpenBLAS was
// not measured; no budget for another profile.
func TestBudget(t *testing.T) {
	res := &hostcal.Result{Entry: hostcal.Entry{Speeds: cost.Speeds{GemmGFLOPs: 250, AttentionGFLOPs: 190, StepSec: 0.1}}}
	b := budgetOf("cpu", 6864, res)
	if b == nil || b.PeakSource != "native-gemm (OpenBLAS not measured)" || math.Abs(b.NormalisedSec-6864*250/400.0) > 1e-9 || !b.Within {
		t.Errorf("without OpenBLAS: %+v, want 6864 x 250 / 400 = 4290 s from the native GEMM, within", b)
	}
	res.OpenBLAS = &hostcal.Sgemm{GFLOPs: 600}
	if b = budgetOf("cpu", 6864, res); b.PeakSource != "openblas" || b.NormalisedSec != 6864*600/400.0 || b.Within {
		t.Errorf("with OpenBLAS 600: %+v, want 10296 s from OpenBLAS, over 5400", b)
	}
	if b = budgetOf("smoke", 6864, res); b != nil {
		t.Errorf("smoke: %+v, want no budget", b)
	}
	var buf bytes.Buffer
	writeHost(&buf, planEstimate{Host: &planHost{Host: hostcal.Current(), Speeds: res.Speeds, Reference: cost.Reference}, Budget: budgetOf("cpu", 6864, res)})
	if !strings.Contains(buf.String(), "budget: 1h54m24s cold x OpenBLAS 2-thread sgemm peak 600.0 GFLOP/s / 400 = 2h51m36s on the reference host, over the cpu profile's 1h30m0s") {
		t.Errorf("budget line:\n%s", buf.String())
	}
}

// plan says when its probe ran on a loaded machine (load average above the
// cores), and says nothing of load on a quiet one (the control).
func TestHostLoadWarning(t *testing.T) {
	h := hostcal.Host{CPUModel: "AMD EPYC", Kernels: "avx512 assembly", Cores: 2, Code: "0123456789ab"}
	for _, c := range []struct {
		load float64
		warn bool
	}{{8.3, true}, {1.5, false}, {0, false}} {
		var buf bytes.Buffer
		writeHost(&buf, planEstimate{Host: &planHost{Host: h, Speeds: cost.Reference, Reference: cost.Reference, Load: c.load}})
		if got := strings.Contains(buf.String(), fmt.Sprintf("load average %.1f on 2 cores", c.load)); got != c.warn {
			t.Errorf("load %.1f: warning %v, want %v:\n%s", c.load, got, c.warn, buf.String())
		}
	}
}

package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"routebench/planner/cost"
	"routebench/planner/hostcal"
)

// calibrationFlags are plan's flags for the host calibration.
type calibrationFlags struct {
	recalibrate, openblas bool
}

// hostCalibration is this host's calibration (planner/hostcal): the cached
// probe, or a new one. Its messages (a cache ignored, a probe run) go to
// log, so that plan --json's output stays JSON. nil, with the reason on
// log, when the probe is off (ROUTEBENCH_CALIBRATION_DIR=off) or fails:
// the estimate then uses the built-in constants and says so.
func hostCalibration(log io.Writer, f calibrationFlags) *hostcal.Result {
	dir, err := hostcal.Dir()
	if err != nil {
		fmt.Fprintln(log, err)
		return nil
	}
	if dir == hostcal.Off {
		return nil
	}
	cwd, _ := os.Getwd()
	res, err := hostcal.Calibrate(hostcal.Options{
		Dir: dir, Host: hostcal.Current(), Now: time.Now().UTC(),
		Recalibrate: f.recalibrate, OpenBLAS: f.openblas,
		Probe: hostcal.Probe, ProbeOpenBLAS: hostcal.OpenBLASPeak(cwd), LoadAverage: hostcal.LoadAverage, Log: log,
	})
	if err != nil {
		fmt.Fprintf(log, "%v: estimating with the built-in constants\n", err)
		return nil
	}
	return &res
}

// hostSource is the calibration name each stage's estimate carries.
const hostSource = "host probe"

// planHost is the host calibration in plan --json.
type planHost struct {
	Host      hostcal.Host `json:"host"`
	Speeds    cost.Speeds  `json:"speeds"`
	Reference cost.Speeds  `json:"reference"` // the built-in constants' host
	Measured  time.Time    `json:"measured"`
	Load      float64      `json:"load_average"` // before the probe; 0: unknown
	Cached    bool         `json:"cached"`
	Path      string       `json:"path"`
}

// planBudget is the cpu profile's normalised budget in plan --json.
type planBudget struct {
	ColdSec       float64 `json:"cold_seconds"`
	PeakGFLOPs    float64 `json:"sgemm_peak_gflops"`
	PeakSource    string  `json:"sgemm_peak_source"` // "openblas" or "native-gemm (OpenBLAS not measured)"
	NormalisedSec float64 `json:"normalised_seconds"`
	BudgetSec     float64 `json:"budget_seconds"`
	Within        bool    `json:"within"`
}

// budgetOf is the cpu profile's cold total on the budget's reference host:
// with OpenBLAS's measured peak where the calibration has it, else with the
// native GEMM's (kernelspeed's PeakProduct, 0.97-0.99 of OpenBLAS's on the
// AVX-512 development host; untested as a stand-in elsewhere), said so.
// nil for other profiles and without a host calibration.
func budgetOf(profile string, coldSec float64, hc *hostcal.Result) *planBudget {
	if profile != cost.BudgetProfile || hc == nil {
		return nil
	}
	b := &planBudget{ColdSec: coldSec, PeakGFLOPs: hc.Speeds.GemmGFLOPs, PeakSource: "native-gemm (OpenBLAS not measured)", BudgetSec: cost.BudgetSeconds}
	if hc.OpenBLAS != nil {
		b.PeakGFLOPs, b.PeakSource = hc.OpenBLAS.GFLOPs, "openblas"
	}
	b.NormalisedSec = cost.Normalised(coldSec, b.PeakGFLOPs)
	b.Within = b.NormalisedSec <= b.BudgetSec
	return b
}

// writeHost prints which calibration priced the plan and, for the cpu
// profile, its normalised budget.
func writeHost(w io.Writer, pe planEstimate) {
	h := pe.Host
	if h == nil {
		fmt.Fprintf(w, "host calibration: none, the built-in constants (their host: %s); plan --recalibrate probes this one\n", speedsLine(cost.Reference))
		return
	}
	how := "probed now"
	if h.Cached {
		how = "cached"
	}
	fmt.Fprintf(w, "host calibration: %s: %s, against the built-in constants' host's %s (probed %s, %s: %s)\n",
		h.Host, speedsLine(h.Speeds), speedsLine(h.Reference), h.Measured.Format("2006-01-02 15:04 MST"), how, h.Path)
	if h.Load > float64(h.Host.Cores) {
		fmt.Fprintf(w, "  the probe ran at load average %.1f on %d cores: other work slowed its figures, and the estimate assumes that load for the whole run (plan --recalibrate when the machine is quieter)\n", h.Load, h.Host.Cores)
	}
	if b := pe.Budget; b != nil {
		verdict := "within"
		if !b.Within {
			verdict = "over"
		}
		peak := fmt.Sprintf("OpenBLAS 2-thread sgemm peak %.1f GFLOP/s", b.PeakGFLOPs)
		if b.PeakSource != "openblas" {
			peak = fmt.Sprintf("native GEMM peak %.1f GFLOP/s, standing in for OpenBLAS's (not measured on this host: plan --openblas)", b.PeakGFLOPs)
		}
		fmt.Fprintf(w, "budget: %s cold x %s / %.0f = %s on the reference host, %s the cpu profile's %s\n",
			cost.Duration(b.ColdSec), peak, cost.BudgetPeakGFLOPs, cost.Duration(b.NormalisedSec), verdict, cost.Duration(b.BudgetSec))
	}
}

func speedsLine(s cost.Speeds) string {
	return fmt.Sprintf("GEMM %.1f GFLOP/s, rope attention at 4,096 %.1f GFLOP/s, rope training step %.4f s", s.GemmGFLOPs, s.AttentionGFLOPs, s.StepSec)
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"

	"routebench/artifacts"
	"routebench/pipeline"
	"routebench/planner/cost"
	"routebench/planner/hostcal"
)

// planEstimate is the cost model's figures in `plan --json`.
type planEstimate struct {
	TotalSec float64 `json:"total_seconds"`  // every stage, cold
	ToRunSec float64 `json:"to_run_seconds"` // the stages not cached
	Cores    int     `json:"cores"`
	// Assumption is what the figures take for granted about the machine.
	Assumption  string         `json:"assumption"`
	Calibration map[string]int `json:"calibration"` // source -> stages it priced
	// Host is the host probe that moved the built-in constants to this
	// host (planner/hostcal); null where none did (--builtin-cost, the
	// probe off or failed).
	Host *planHost `json:"host"`
	// Budget is the cpu profile's cold total normalised to the budget's
	// reference host (planner/cost.Normalised); null for other profiles
	// and without a host probe.
	Budget *planBudget `json:"budget,omitempty"`
}

// estimatePlan prices every stage of plan on this machine: the built-in
// constants moved to this host by hc's probe (planner/cost.Host; the
// constants alone when hc is nil), and the cached stages' recorded wall
// times over them (planner/cost.FitOver) unless builtin is set, which
// prices with the dev machine's constants alone.
func estimatePlan(plan *pipeline.Plan, done map[string]*artifacts.Artifact, builtin bool, hc *hostcal.Result) ([]cost.Estimate, planEstimate) {
	cores := runtime.GOMAXPROCS(0)
	cal := cost.Builtin(cores)
	var host *planHost
	if !builtin && hc != nil {
		if c, err := cost.Host(hc.Speeds, cores, hostSource); err == nil { // Load and Probe checked the figures
			cal = c
			host = &planHost{Host: hc.Host, Speeds: hc.Speeds, Reference: cost.Reference, Measured: hc.Measured, Load: hc.Load, Cached: hc.Cached, Path: hc.Path}
		}
	}
	if !builtin {
		var recs []cost.Record
		for _, s := range plan.Stages {
			if ri, ok := runInfoOf(done[s.Name]); ok {
				recs = append(recs, cost.Record{Stage: s, Run: ri})
			}
		}
		cal = cost.FitOver(cal, recs)
	}
	est, total := cal.Plan(plan)
	pe := planEstimate{TotalSec: total, Cores: cores, Calibration: map[string]int{}, Host: host,
		Assumption: fmt.Sprintf("stages run one after another, each on all %d cores (GOMAXPROCS=%d)", cores, cores)}
	if host != nil {
		pe.Budget = budgetOf(plan.Profile, total, hc)
	}
	for _, e := range est {
		if done[e.Stage] == nil {
			pe.ToRunSec += e.Seconds
		}
		pe.Calibration[e.Calibration]++
	}
	return est, pe
}

// runInfoOf reads a cached stage's run record; a missing or unreadable one
// leaves the stage out of the calibration (it is volatile bookkeeping, not
// a result).
func runInfoOf(a *artifacts.Artifact) (pipeline.RunInfo, bool) {
	var ri pipeline.RunInfo
	if a == nil {
		return ri, false
	}
	b, err := a.ReadFile(pipeline.RunInfoFile)
	if err != nil || json.Unmarshal(b, &ri) != nil || ri.WallSec <= 0 {
		return ri, false
	}
	return ri, true
}

// estimateLine is the one-line summary reproduce and sweep print before
// they run, and plan after its stage list.
func estimateLine(pe planEstimate) string {
	return fmt.Sprintf("estimate: %s to run now, %s for every stage cold; %s; calibration %s",
		cost.Duration(pe.ToRunSec), cost.Duration(pe.TotalSec), pe.Assumption, calibrationSummary(pe.Calibration))
}

// writeRunEstimate is the line reproduce and sweep print before they run.
// It is advice: a Status error is left for Run to report with its context.
func writeRunEstimate(w io.Writer, label string, r *pipeline.Runner, plan *pipeline.Plan) {
	if _, done, err := r.Status(plan); err == nil {
		_, pe := estimatePlan(plan, done, false, hostCalibration(os.Stderr, calibrationFlags{}))
		fmt.Fprintf(w, "%s%s: %s\n", label, plan.Profile, estimateLine(pe))
	}
}

// calibrationSummary lists the calibrations used and how many stages each priced.
func calibrationSummary(m map[string]int) string {
	var parts []string
	for src, n := range m {
		parts = append(parts, fmt.Sprintf("%s (%d stages)", src, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// writeEstimates prints one line per stage: its estimate, whether it is
// cached, and the calibration that priced it.
func writeEstimates(w io.Writer, est []cost.Estimate, done map[string]*artifacts.Artifact) {
	width := 0
	for _, e := range est {
		width = max(width, len(e.Stage))
	}
	fmt.Fprintf(w, "estimated wall time per stage:\n")
	for _, e := range est {
		state := "to run"
		if done[e.Stage] != nil {
			state = "cached"
		}
		fmt.Fprintf(w, "  %-*s %8s  %s  (%s)\n", width, e.Stage, cost.Duration(e.Seconds), state, e.Calibration)
	}
}

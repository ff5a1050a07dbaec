package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"

	"routebench/artifacts"
	"routebench/pipeline"
	"routebench/planner/cost"
)

// planEstimate is the cost model's figures in `plan --json`.
type planEstimate struct {
	TotalSec float64 `json:"total_seconds"`  // every stage, cold
	ToRunSec float64 `json:"to_run_seconds"` // the stages not cached
	Cores    int     `json:"cores"`
	// Assumption is what the figures take for granted about the machine.
	Assumption  string         `json:"assumption"`
	Calibration map[string]int `json:"calibration"` // source -> stages it priced
}

// estimatePlan prices every stage of plan on this machine. The cached
// stages' recorded wall times calibrate it (planner/cost.Fit) unless
// builtin is set, which prices with the dev machine's constants alone.
func estimatePlan(plan *pipeline.Plan, done map[string]*artifacts.Artifact, builtin bool) ([]cost.Estimate, planEstimate) {
	cores := runtime.GOMAXPROCS(0)
	cal := cost.Builtin(cores)
	if !builtin {
		var recs []cost.Record
		for _, s := range plan.Stages {
			if ri, ok := runInfoOf(done[s.Name]); ok {
				recs = append(recs, cost.Record{Stage: s, Run: ri})
			}
		}
		cal = cost.Fit(recs, cores)
	}
	est, total := cal.Plan(plan)
	pe := planEstimate{TotalSec: total, Cores: cores, Calibration: map[string]int{},
		Assumption: fmt.Sprintf("stages run one after another, each on all %d cores (GOMAXPROCS=%d)", cores, cores)}
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
		_, pe := estimatePlan(plan, done, false)
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

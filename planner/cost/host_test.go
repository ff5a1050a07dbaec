package cost

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"routebench/pipeline"
)

// coldRun is a measured cold run: its stages' wall times and the figures
// its own kernelspeed and stepspeed stages measured (testdata).
type coldRun struct {
	Commit string             `json:"commit"`
	Total  float64            `json:"total_seconds"`
	Speeds Speeds             `json:"speeds"`
	Stages map[string]float64 `json:"stages"`
}

func loadColdRun(t *testing.T, name string) coldRun {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var r coldRun
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("testdata/%s: %v", name, err)
	}
	return r
}

// At the reference's own figures a host calibration is the built-in one.
func TestHostAtReferenceIsBuiltin(t *testing.T) {
	plan := profilePlan(t, "cpu")
	cal, err := Host(Reference, DevCores, "host probe")
	if err != nil {
		t.Fatal(err)
	}
	est, total := cal.Plan(plan)
	bEst, bTotal := Builtin(DevCores).Plan(plan)
	for i := range est {
		if !near(est[i].Seconds, bEst[i].Seconds, 1e-12) || est[i].Calibration != "host probe" {
			t.Errorf("%s: %v s (%s), built-in %v s", est[i].Stage, est[i].Seconds, est[i].Calibration, bEst[i].Seconds)
		}
	}
	if !near(total, bTotal, 1e-12) {
		t.Errorf("total %v, built-in %v", total, bTotal)
	}
}

// doublesWith checks that each stage of kind priced by b costs factor
// times what a priced it (its flop part and its fixed part both).
func doublesWith(plan *pipeline.Plan, a, b Calibration, kind string, factor float64) error {
	n := 0
	for _, s := range plan.Stages {
		if s.Kind != kind {
			continue
		}
		n++
		x, y := a.Stage(s), b.Stage(s)
		if !near(y.Seconds, factor*x.Seconds, 1e-9) {
			return fmt.Errorf("%s: %.1f s -> %.1f s, want x%g", s.Name, x.Seconds, y.Seconds, factor)
		}
	}
	if n == 0 {
		return fmt.Errorf("no %s stage in the plan", kind)
	}
	return nil
}

// A fake probe's figures scale the estimate as they should: a training
// step twice as long doubles every train and stepspeed stage; attention
// at half the rate doubles every evaluation; the GEMM at half the rate
// doubles theory, tokenize and report; kernelspeed, which times a fixed
// second per benchmark, never moves. The control: the built-in
// calibration, which ignores the probe, fails the same checks.
func TestHostScalesWithProbe(t *testing.T) {
	plan := profilePlan(t, "cpu")
	base := Speeds{GemmGFLOPs: 300, AttentionGFLOPs: 200, StepSec: 0.1}
	host := func(s Speeds) Calibration {
		c, err := Host(s, DevCores, "host probe")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	one := host(base)
	slowStep, slowAtt, slowGemm := base, base, base
	slowStep.StepSec *= 2
	slowAtt.AttentionGFLOPs /= 2
	slowGemm.GemmGFLOPs /= 2
	checks := []struct {
		name  string
		speed Speeds
		kinds map[string]float64 // kind -> factor
	}{
		{"step x2", slowStep, map[string]float64{"train": 2, "stepspeed": 2, "evaluate": 1, "theory": 1, "kernelspeed": 1}},
		{"attention /2", slowAtt, map[string]float64{"evaluate": 2, "train": 1, "theory": 1}},
		{"GEMM /2", slowGemm, map[string]float64{"theory": 2, "tokenize": 2, "report": 2, "train": 1, "evaluate": 1, "kernelspeed": 1}},
	}
	for _, c := range checks {
		for kind, f := range c.kinds {
			if err := doublesWith(plan, one, host(c.speed), kind, f); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			// Control: a calibration that ignores the probe moves nothing.
			if f != 1 {
				if err := doublesWith(plan, Builtin(DevCores), Builtin(DevCores), kind, f); err == nil {
					t.Errorf("control %s: the built-in calibration passed the x%g check on %s", c.name, f, kind)
				}
			}
		}
	}
	// And the compute part alone (flops x seconds per flop) doubles with the step.
	for _, s := range plan.Stages {
		if s.Kind == "train" {
			w := WorkOf(s)
			a, b := one.rates[w.group()], host(slowStep).rates[w.group()]
			if !near(w.Flops*b.SecPerFlop, 2*w.Flops*a.SecPerFlop, 1e-12) {
				t.Errorf("%s: compute part %.1f s -> %.1f s, want x2", s.Name, w.Flops*a.SecPerFlop, w.Flops*b.SecPerFlop)
			}
			break
		}
	}
}

// Figures that are not positive and finite never scale an estimate.
func TestHostRejectsBadSpeeds(t *testing.T) {
	for _, s := range []Speeds{{}, {GemmGFLOPs: 300, AttentionGFLOPs: 200, StepSec: -1},
		{GemmGFLOPs: math.Inf(1), AttentionGFLOPs: 200, StepSec: 0.1}, {GemmGFLOPs: 300, AttentionGFLOPs: math.NaN(), StepSec: 0.1}} {
		if _, err := Host(s, 2, "x"); err == nil {
			t.Errorf("Host(%+v) accepted", s)
		}
	}
}

// The check of issue 51: the cpu profile's cold estimate, calibrated by the
// figures a host measured, within 10% of a cold run measured on that host,
// and the train and evaluate stages' totals (98% of a run) within 15% each.
// The figures are the run's own kernelspeed and stepspeed stages': a
// prediction, since Reference and the constants were fitted to runs of
// 2026-12-03. The control: the built-in constants alone, which ignore the
// figures, must miss by more than 10% (each run below was made while the
// host ran well away from the reference's speeds), or the check cannot tell
// a host calibration from none.
func checkColdRun(t *testing.T, file string, stages int, set ...string) {
	t.Helper()
	run := loadColdRun(t, file)
	plan := profilePlan(t, "cpu", set...)
	if len(plan.Stages) != stages {
		t.Fatalf("the cpu profile has %d stages; the run had %d: the check no longer compares like with like", len(plan.Stages), stages)
	}
	cal, err := Host(run.Speeds, DevCores, "host probe")
	if err != nil {
		t.Fatal(err)
	}
	est, _ := cal.Plan(plan)
	byKind, measured := map[string]float64{}, map[string]float64{}
	var total float64
	matched := 0
	for _, e := range est {
		m, ok := run.Stages[e.Stage]
		if !ok {
			continue // tokenize and report: not in the run's table
		}
		matched++
		total += e.Seconds
		byKind[e.Work.Kind] += e.Seconds
		measured[e.Work.Kind] += m
	}
	if matched != len(run.Stages) {
		t.Fatalf("%d of the run's %d stages are in the plan: the stage names moved", matched, len(run.Stages))
	}
	// The stages the run's table has (all but tokenize and report, a few
	// seconds), against that table's sum.
	if e := total/run.Total - 1; math.Abs(e) > 0.10 {
		t.Errorf("cpu profile at %s's figures: estimated %s, measured %s (%+.1f%%), want within 10%%", run.Commit, Duration(total), Duration(run.Total), 100*e)
	} else {
		t.Logf("cpu profile at %s's figures: estimated %s, measured %s (%+.1f%%)", run.Commit, Duration(total), Duration(run.Total), 100*e)
	}
	for _, kind := range []string{"train", "evaluate"} {
		got := byKind[kind]
		if e := got/measured[kind] - 1; math.Abs(e) > 0.15 {
			t.Errorf("%s stages: estimated %s, measured %s (%+.1f%%), want within 15%%", kind, Duration(got), Duration(measured[kind]), 100*e)
		} else {
			t.Logf("%s stages: estimated %s, measured %s (%+.1f%%)", kind, Duration(got), Duration(measured[kind]), 100*e)
		}
	}
	var builtin float64
	bEst, _ := Builtin(DevCores).Plan(plan)
	for _, e := range bEst {
		if _, ok := run.Stages[e.Stage]; ok {
			builtin += e.Seconds
		}
	}
	if e := builtin/run.Total - 1; math.Abs(e) <= 0.10 {
		t.Errorf("control: the built-in constants alone price the run within 10%% (%s, %+.1f%%): the check cannot tell a host calibration from none", Duration(builtin), 100*e)
	} else {
		t.Logf("control: the built-in constants alone: %s (%+.1f%%)", Duration(builtin), 100*e)
	}
}

// The cold make reproduce at a04a231 (2026-12-06, 2-core AVX-512 AMD EPYC,
// 68 stages, 1h54m24s, the host 1.5x slower than the constants'): the
// profile as it had it, seeds 21-25 alone (the fresh seeds 31-35 of issue
// 52 came after).
func TestHostMatchesColdRunA04a231(t *testing.T) {
	checkColdRun(t, "coldrun-a04a231.json", 68, "seeds=21,22,23,24,25", "variant_seeds={}")
}

// The cold make reproduce at 4421ca2 (2026-12-07, the same VM, 133 stages
// with seeds 31-35, 2h50m of stage time): evaluate then had the mechanism
// probe, the route trace and the copy probe's control pass, all after the
// constants' fit, and the host's attention ran at 217.8 GFLOP/s in the
// run's kernelspeed against 266.8 for the reference (288 in the same
// stage on a quiet host the next hour).
func TestHostMatchesColdRun4421ca2(t *testing.T) {
	checkColdRun(t, "coldrun-4421ca2.json", 133)
}

package cost

import (
	"fmt"
	"math"
)

// Speeds are a host's figures on three measurements the stages themselves
// make, so that a host can be compared with the one the built-in constants
// were fitted on (hostcal measures them; the kernelspeed and stepspeed
// stages record the same ones in every RESULTS.md):
//
//   - GemmGFLOPs: the native GEMM on kernelspeed.PeakProduct's 2,048^3
//     product, the best of its runs (kernelspeed's "Peak");
//   - AttentionGFLOPs: native streaming attention, rope, 4 heads x 32, at
//     L = 4,096 (kernelspeed's rope row at 4,096), the median of its runs;
//   - StepSec: one rope optimizer step at the cpu profile's shape (T 512,
//     batch 8, d_model 128; stepspeed's rope s/step), the median.
type Speeds struct {
	GemmGFLOPs      float64 `json:"gemm_gflops"`
	AttentionGFLOPs float64 `json:"attention_gflops"`
	StepSec         float64 `json:"step_seconds"`
}

// Reference is what the built-in constants' host measured, each from the
// run its constants were fitted to (2-core AMD EPYC, AVX-512 kernels,
// 2026-12-03; git history of RESULTS.md):
//
//   - StepSec 0.0726: stepspeed's rope in the cold run of be5a936 (29m10s),
//     the run the training rates (179 GFLOP/s, PaTH 1.19x) are fitted to;
//   - AttentionGFLOPs 266.8: kernelspeed's rope at 4,096 in the cold run of
//     fc1c996 (27m33s), the run the evaluation rates (278 GFLOP/s, PaTH
//     1.22x) are fitted to;
//   - GemmGFLOPs 373.4: the first PeakProduct measured on those kernels on a
//     steady host (d11cac3; neither run above had the product yet). It
//     scales only theory, tokenize, report and study, under a minute of a
//     cpu run.
//
// Refit it with the constants: a constant fitted to one run and a
// reference figure from another mis-scale every host.
var Reference = Speeds{GemmGFLOPs: 373.4, AttentionGFLOPs: 266.8, StepSec: 0.0726}

// Check says whether s can scale a calibration: every figure positive and
// finite.
func (s Speeds) Check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"gemm_gflops", s.GemmGFLOPs}, {"attention_gflops", s.AttentionGFLOPs}, {"step_seconds", s.StepSec}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("host speeds: %s is %v, want a positive finite figure", f.name, f.v)
		}
	}
	return nil
}

// slowdown is how many times longer a stage of kind takes on a host with
// speeds s than on the reference host: training and stepspeed by the
// training step's time, evaluation by streaming attention's rate (at the
// cpu profile's lengths attention is nearly all of it), theory, tokenize,
// report and study by the GEMM's rate (plain Go on every core; no closer
// probe, and under a minute of a run). kernelspeed is not scaled: each of
// its benchmarks runs about a second whatever the host's speed
// (testing.Benchmark's benchtime).
func (s Speeds) slowdown(kind string) float64 {
	switch kind {
	case "train", "stepspeed":
		return s.StepSec / Reference.StepSec
	case "evaluate":
		return Reference.AttentionGFLOPs / s.AttentionGFLOPs
	case "kernelspeed":
		return 1
	}
	return Reference.GemmGFLOPs / s.GemmGFLOPs
}

// Host is the built-in constants moved to a host that measured s on all
// of its cores: each group's seconds per flop and fixed part times the
// host's slowdown on its kind. No 1/cores scaling: the probe ran on every
// core, as the stages do. source names the calibration in each estimate.
func Host(s Speeds, cores int, source string) (Calibration, error) {
	if err := s.Check(); err != nil {
		return Calibration{}, err
	}
	cal := Calibration{Cores: max(cores, 1), rates: map[string]Rate{}}
	for g, r := range builtin {
		k := s.slowdown(kindOf(g))
		cal.rates[g] = Rate{SecPerFlop: r.SecPerFlop * k, Overhead: r.Overhead * k, Source: source}
	}
	return cal, nil
}

// kindOf is the stage kind of a group name ("train/base" -> "train").
func kindOf(group string) string {
	for i := range len(group) {
		if group[i] == '/' {
			return group[:i]
		}
	}
	return group
}

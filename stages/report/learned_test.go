package report

import (
	"math"
	"strings"
	"testing"

	"routebench/modelspec"
)

// shiftOf against a hand computation: V = 2 tokens, H = 1, P = 2 pairs;
// token 1 never moved.
func TestShiftOf(t *testing.T) {
	initial := []float32{3, 4, 1, 2} // [token][pair]
	trained := []float32{3, 4.5, 1, 2}
	s := shiftOf(trained, initial, 2)
	if want := 0.5 / math.Sqrt(9+16+1+4); math.Abs(s.Rel-want) > 1e-12 {
		t.Errorf("relative change %g, want %g", s.Rel, want)
	}
	if s.RMS != 0.5 || s.PairRMS[0] != 0 || s.PairRMS[1] != 0.5 {
		t.Errorf("RMS %g, per pair %v, want 0.5 and [0 0.5]", s.RMS, s.PairRMS)
	}
	if s.MaxAbs != 0.5 || s.Moved != 0.25 {
		t.Errorf("max change %g, moved %g; want 0.5, 0.25", s.MaxAbs, s.Moved)
	}
	s.Init = modelspec.AngleInitRandom
	var b strings.Builder
	train := &modelspec.TrainReport{Config: modelspec.Config{SigmaMax: 1, SigmaMin: 0.35}}
	renderLearnedShift(&b, []*variantData{{name: "learned-qk-randinit", variant: "learned-qk-randinit", train: train, angleShift: &s}, {name: "rope", variant: "rope"}})
	if out := b.String(); !strings.Contains(out, "| learned-qk-randinit | random | x1 | 9.13% | 0.500 | 0.000 | 0.500 | 0.500 | 25.0% |") || strings.Contains(out, "| rope |") {
		t.Errorf("table:\n%s", out)
	}
}

// From a zero table there is no relative change: the RMS of the angles
// learned is the measure, over the entries that moved only.
func TestShiftOfZeroInit(t *testing.T) {
	s := shiftOf([]float32{0.3, -0.4, 0, 0, 0, 0}, make([]float32, 6), 2)
	if !math.IsNaN(s.Rel) || math.Abs(s.RMS-math.Sqrt(0.125)) > 1e-7 || math.Abs(s.PairRMS[0]-0.3) > 1e-7 || math.Abs(s.PairRMS[1]-0.4) > 1e-7 {
		t.Fatalf("zero start: %+v", s)
	}
	s.Init = modelspec.AngleInitZero
	var b strings.Builder
	train := &modelspec.TrainReport{Config: modelspec.Config{SigmaMax: 1, SigmaMin: 0.35}}
	renderLearnedShift(&b, []*variantData{{name: "learned-qk", variant: "learned-qk", train: train, angleShift: &s}})
	if out := b.String(); !strings.Contains(out, "| learned-qk | zero | x10 | - | 0.354 | 0.300 | 0.400 | 0.400 | 33.3% |") {
		t.Errorf("table:\n%s", out)
	}
}

// learned-proj-qkv's projection sizes: RMS per block by hand, and the
// table row with the isotropic angle sqrt(D) RMS.
func TestAngleProjSize(t *testing.T) {
	s := projSizeOf([][]float32{{0.3, -0.4, 0, 0}, {0, 0, 0, 0}}, 4)
	if math.Abs(s.LayerRMS[0]-0.25) > 1e-7 || s.LayerRMS[1] != 0 {
		t.Fatalf("RMS per block %v, want [0.25 0]", s.LayerRMS)
	}
	var b strings.Builder
	renderAngleProj(&b, []*variantData{{name: "learned-proj-qkv", variant: "learned-proj-qkv", angleProj: s}, {name: "rope", variant: "rope"}})
	if out := b.String(); !strings.Contains(out, "| learned-proj-qkv | 0 | x1 | 0.2500 | 0.500 |") || !strings.Contains(out, "| learned-proj-qkv | 1 | x1 | 0.0000 | 0.000 |") || strings.Contains(out, "| rope |") {
		t.Errorf("table:\n%s", out)
	}
}

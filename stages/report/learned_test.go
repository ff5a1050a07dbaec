package report

import (
	"math"
	"strings"
	"testing"
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
	if s.PairRel[0] != 0 || math.Abs(s.PairRel[1]-0.5/math.Sqrt(16+4)) > 1e-12 {
		t.Errorf("per pair %v, want [0 %g]", s.PairRel, 0.5/math.Sqrt(20))
	}
	if s.MaxAbs != 0.5 || s.Moved != 0.25 {
		t.Errorf("max change %g, moved %g; want 0.5, 0.25", s.MaxAbs, s.Moved)
	}
	var b strings.Builder
	renderLearnedShift(&b, []*variantData{{name: "learned-qk", angleShift: &s}, {name: "rope"}})
	if out := b.String(); !strings.Contains(out, "| learned-qk | 9.13% | 0.00% | 11.18% | 0.500 | 25.0% |") || strings.Contains(out, "| rope |") {
		t.Errorf("table:\n%s", out)
	}
}

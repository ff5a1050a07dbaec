package ropescale

import (
	"math"
	"testing"

	"routebench/modelspec"
)

// TestRopeScalingIdentity: s = 1 is plain RoPE bit for bit, for every method.
func TestRopeScalingIdentity(t *testing.T) {
	want := modelspec.RopeFrequencies(32, 10000)
	for _, m := range append([]string{""}, Methods...) {
		r := Scaling{Method: m, Factor: 1, TrainLen: 128}
		got := r.Frequencies(32, 10000)
		for p := range want {
			if got[p] != want[p] {
				t.Fatalf("%q s=1: theta_%d = %v, want %v", m, p, got[p], want[p])
			}
		}
		if r.QKScale() != 1 {
			t.Fatalf("%q s=1: qk scale %v", m, r.QKScale())
		}
	}
}

// TestRopeScalingHand checks each method against the formulas written out
// per pair (docs/statistics.md, claim v3x).
func TestRopeScalingHand(t *testing.T) {
	const d, base, T, s = 16, 10000.0, 128, 16.0
	for p := 0; p < d/2; p++ {
		th := math.Pow(base, -2*float64(p)/d)
		pi := Scaling{Method: PI, Factor: s}.Frequencies(d, base)[p]
		if math.Abs(pi-th/s) > 1e-15*th {
			t.Errorf("pi theta_%d = %v, want %v", p, pi, th/s)
		}
		ntk := Scaling{Method: NTK, Factor: s}.Frequencies(d, base)[p]
		if w := math.Pow(base*math.Pow(s, float64(d)/(d-2)), -2*float64(p)/d); math.Abs(ntk-w) > 1e-12*w {
			t.Errorf("ntk theta_%d = %v, want %v", p, ntk, w)
		}
		yarn := Scaling{Method: YaRN, Factor: s, TrainLen: T}.Frequencies(d, base)[p]
		rr := T / (2 * math.Pi / th)
		var w float64
		switch {
		case rr < 1:
			w = th / s
		case rr > 32:
			w = th
		default:
			g := (rr - 1) / 31
			w = (1-g)*th/s + g*th
		}
		if math.Abs(yarn-w) > 1e-12*w {
			t.Errorf("yarn theta_%d = %v, want %v (r = %.3g)", p, yarn, w, rr)
		}
	}
	// the NTK exponent makes the lowest pair exactly the PI frequency
	ntk := Scaling{Method: NTK, Factor: s}.Frequencies(d, base)
	pi := Scaling{Method: PI, Factor: s}.Frequencies(d, base)
	if math.Abs(ntk[d/2-1]-pi[d/2-1]) > 1e-12*pi[d/2-1] || ntk[0] != 1 {
		t.Errorf("ntk: lowest pair %v (pi %v), highest %v (want 1)", ntk[d/2-1], pi[d/2-1], ntk[0])
	}
	if got, want := (Scaling{Method: YaRN, Factor: s, TrainLen: T}).QKScale(), 0.1*math.Log(16)+1; got != want {
		t.Errorf("yarn qk scale %v, want %v", got, want)
	}
	for _, bad := range []Scaling{{Method: "xpos", Factor: 2}, {Method: PI, Factor: 0.5}, {Method: YaRN, Factor: 2}} {
		if bad.Validate() == nil {
			t.Errorf("%+v: want a validation error", bad)
		}
	}
}

package theory

import (
	"math"
	"strconv"
)

// The controls: laws that violate a claim, run by the stage through the same
// code as the laws that satisfy it. Each must FAIL one named empirical
// criterion (Control.AsItMust); a control that passes fails its check, since
// then the criterion could not have caught a wrong claim. The controls are
// built here, not read from the config: Validate refuses them as families.

// mixControl is a control law of check 1 and the criteria it must fail
// (a Control each).
type mixControl struct {
	fam      StepFamily
	law      string
	mustFail []string
}

// controlDim is the dimension of the block-SO(2) controls: that of the first
// SO(2) family, so that they are compared at the dimension of the laws they
// stand beside.
func controlDim(mc MixingConfig) int {
	for _, f := range mc.Families {
		if f.Kind == "so2" {
			return f.Dim
		}
	}
	return 16
}

// controlQueries is the queries per context of a mixing control: a quarter
// of the families', since the controls fail by far more than the band (over
// a hundred SE at the cpu profile's sizes).
func controlQueries(q int) int { return max(q/4, min(q, 64)) }

// mixingControls returns check 1's controls:
//   - angles 0 or pi with probability 1/2: ||E[M]|| = 0 (a gap) yet the
//     products stay on the sign subgroup and never reach the torus; the mean
//     criteria all pass, the law criterion must fail;
//   - angles uniform on {0, pi/2, pi, 3pi/2}: ||E[M]|| = 0 and far-route
//     second moment 2/(d+2) as the torus's, so the gap, the window and the
//     second moment all pass, yet the accumulated angle never leaves the
//     four points (E[cos 4 S] = 1): the every-frequency criterion must fail;
//   - RoPE's fixed rotation (block b turns by 10000^(-b/m) per token): drift
//     with no spread, ||E[M]|| = 1; the law criterion must fail, and so must
//     the window criterion (its slow blocks never turn far enough);
//   - a position-dependent law, Gaussian angles whose sd shrinks along the
//     sequence as 0.6/sqrt(1 + t/256): the window grows with position, so the
//     L-independence criterion must fail.
func mixingControls(mc MixingConfig) []mixControl {
	d := controlDim(mc)
	shrink := math.Max(16, float64(mc.Contexts[0])/4)
	return []mixControl{
		{fam: StepFamily{Name: "control zero-or-pi", Kind: "so2", Dim: d, Angle: "zeropi"},
			law: "block SO(2), angles 0 or pi (gap, no mixing)", mustFail: []string{critLaw}},
		{fam: StepFamily{Name: "control quarter turns", Kind: "so2", Dim: d, Angle: "quarter"},
			law: "block SO(2), angles uniform on {0, pi/2, pi, 3pi/2} (gap, second moment of the torus, no mixing)", mustFail: []string{critChars}},
		{fam: StepFamily{Name: "control fixed rotation", Kind: "so2", Dim: d, Angle: "rope"},
			law: "RoPE's fixed rotation, block b by 10000^(-b/m) per token (drift, no spread)", mustFail: []string{critLaw, critWindow}},
		{fam: StepFamily{Name: "control shrinking spread", Kind: "so2", Dim: d, Angle: "gaussian", Scale: 0.6, Shrink: shrink},
			law: "Gaussian angles with sd 0.6/sqrt(1 + t/" + strconv.FormatFloat(shrink, 'g', -1, 64) + ") at token t (window grows with position)", mustFail: []string{critNoGrowL}},
	}
}

package report

import (
	"strings"
	"testing"

	"routebench/modelspec"
	"routebench/stages/evaluate"
)

// The section appears only with PaTH runs, summarises the heads (median of
// an even count is the mean of the middle two) and states the SO(2) gap
// from train.json.
func TestRenderStepGaps(t *testing.T) {
	var b strings.Builder
	rope := &variantData{name: "random-qk", eval: madeResult("random-qk", at(iv(1, 1, 1), iv(1, 1, 1)), nil),
		train: &modelspec.TrainReport{Config: modelspec.Config{SigmaMax: 1, SigmaMin: 0.35}, SpectralGaps: []float64{0.393, 0.059}}}
	renderStepGaps(&b, []*variantData{rope})
	if b.Len() != 0 {
		t.Fatalf("a profile without PaTH got a step-gap section:\n%s", b.String())
	}
	p := madeResult("path", at(iv(1, 1, 1), iv(1, 1, 1)), nil)
	p.Lengths[0].StepGaps = []evaluate.StepGap{
		{Layer: 0, Head: 0, Dim: 16, Tokens: 128, OpNorm: 0.99, Gap: 0.01, EigMin: 0.5, EigMax: 0.99, MeanBeta: 1.0},
		{Layer: 0, Head: 1, Dim: 16, Tokens: 128, OpNorm: 0.97, Gap: 0.03, EigMin: 0.4, EigMax: 0.97, MeanBeta: 1.2},
		{Layer: 1, Head: 0, Dim: 16, Tokens: 128, OpNorm: 0.96, Gap: 0.04, EigMin: 0.3, EigMax: 0.96, MeanBeta: 0.8},
		{Layer: 1, Head: 1, Dim: 16, Tokens: 128, OpNorm: 1, Gap: 0, EigMin: 0.2, EigMax: 1, MeanBeta: 0.6},
	}
	renderStepGaps(&b, []*variantData{rope, {name: "path", eval: p}})
	out := b.String()
	for _, want := range []string{
		"## PaTH's measured spectral gap",
		"train.json of random-qk: 0.393 for the fastest pair, sigma 1.00, to 0.059",
		"| path | 128 | 128 | 4 | 0.0000 / 0.0200 / 0.0400 | 1.0000 | 0.600 .. 1.200 | 0.0750 |",
		"| path | 1 | 1 | 1.0000 | 0.0000 | 0.2000 .. 1.0000 | 0.600 |",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("section lacks %q:\n%s", want, out)
		}
	}
}

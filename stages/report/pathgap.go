package report

import (
	"fmt"
	"slices"
	"strings"

	"routebench/stages/evaluate"
)

// renderStepGaps is RESULTS.md's section on PaTH's measured spectral gap
// (evaluate's step_gaps) beside the SO(2) variants' gap by construction
// (train.json's spectral_gaps); nothing when no run has PaTH steps.
func renderStepGaps(b *strings.Builder, vs []*variantData) {
	var runs []*variantData
	for _, v := range vs {
		if v.eval != nil && len(v.eval.Lengths) > 0 && len(v.eval.Lengths[0].StepGaps) > 0 {
			runs = append(runs, v)
		}
	}
	if len(runs) == 0 {
		return
	}
	b.WriteString("## PaTH's measured spectral gap\n\n" +
		"The theory's mixing window is finite when the mean step has a spectral gap, ||E[M_t]||_op < 1 (theory check 1). " +
		"For the SO(2) accumulated variants the gap is set by construction, per pair 1 - E[cos a] = 1 - exp(-sigma^2/2)")
	for _, v := range vs {
		if v.train != nil && len(v.train.SpectralGaps) > 0 {
			g := v.train.SpectralGaps
			fmt.Fprintf(b, " (train.json of %s: %.3f for the fastest pair, sigma %.2f, to %.3f for the slowest, sigma %.2f)",
				v.name, g[0], v.train.Config.SigmaMax, g[len(g)-1], v.train.Config.SigmaMin)
			break
		}
	}
	b.WriteString(". For PaTH the step is H_t = I - beta_t w_t w_t^T, so the same quantity is 1 - ||E[H_t]||_op with " +
		"E[H_t] = I - E[beta_t w_t w_t^T], measured here inside the trained models: per layer and head, over every held-out " +
		"window of a length (eigenvalues by Jacobi in float64). For d >= 2 the gap is at most E[beta]/d < 2/d (a step moves one " +
		"direction of d; the bound column), so PaTH's gap shrinks with the head width where SO(2)'s does not.\n\n" +
		"| run | L | tokens | heads | gap: min / median / max over heads | ||E[H]||_op max | E[beta] range | bound E[beta]/d (max) |\n" +
		"|---|---|---|---|---|---|---|---|\n")
	for _, v := range runs {
		for _, l := range v.eval.Lengths {
			if len(l.StepGaps) == 0 {
				continue
			}
			s := gapSummaryOf(l.StepGaps)
			fmt.Fprintf(b, "| %s | %d | %d | %d | %.4f / %.4f / %.4f | %.4f | %.3f .. %.3f | %.4f |\n", v.name, l.L, l.StepGaps[0].Tokens,
				len(l.StepGaps), s.min, s.median, s.max, s.opMax, s.betaMin, s.betaMax, s.boundMax)
		}
	}
	b.WriteString("\nPer layer and head at T: the eigenvalue range of E[H_t] (the norm is its largest |eigenvalue|).\n\n" +
		"| run | layer | head | ||E[H]||_op | gap | eigenvalues of E[H] | E[beta] |\n|---|---|---|---|---|---|---|\n")
	for _, v := range runs {
		for _, g := range v.eval.Lengths[0].StepGaps {
			fmt.Fprintf(b, "| %s | %d | %d | %.4f | %.4f | %.4f .. %.4f | %.3f |\n", v.name, g.Layer, g.Head, g.OpNorm, g.Gap, g.EigMin, g.EigMax, g.MeanBeta)
		}
	}
	b.WriteString("\n")
}

// gapSummary is one length's step gaps over layers and heads.
type gapSummary struct {
	min, median, max, opMax, betaMin, betaMax, boundMax float64
}

func gapSummaryOf(gs []evaluate.StepGap) gapSummary {
	var gaps []float64
	s := gapSummary{betaMin: gs[0].MeanBeta, betaMax: gs[0].MeanBeta}
	for _, g := range gs {
		gaps = append(gaps, g.Gap)
		s.opMax = max(s.opMax, g.OpNorm)
		s.betaMin, s.betaMax = min(s.betaMin, g.MeanBeta), max(s.betaMax, g.MeanBeta)
		s.boundMax = max(s.boundMax, g.MeanBeta/float64(g.Dim))
	}
	slices.Sort(gaps)
	s.min, s.max = gaps[0], gaps[len(gaps)-1]
	n := len(gaps)
	s.median = (gaps[(n-1)/2] + gaps[n/2]) / 2
	return s
}

package report

import (
	"fmt"
	"math"
	"strings"

	"routebench/stats/decide"
)

// renderV3 writes the v3 claims: the summary (raw and Holm verdicts, the
// effect with its interval and what it covers, p-values, power), then each
// claim's criterion and numbers.
func renderV3(b *strings.Builder, g seedGroups, seeds []uint64) {
	if len(g.v3) == 0 {
		return
	}
	b.WriteString("### Claims v3 (pre-registered in docs/statistics.md before this run; the answer)\n\n")
	if Exploratory(seeds) {
		fmt.Fprintf(b, "**Exploratory.** This run's seeds %v include seeds design choices were made on (%v): its v3 verdicts show what the criteria give, and confirm nothing. The confirmatory run is the cpu profile's seeds 21-25.\n\n", seeds, exploratorySeeds)
	} else {
		fmt.Fprintf(b, "Confirmatory: seeds %v were never used for a design choice.\n\n", seeds)
	}
	b.WriteString("Each claim's interval is a " + confidenceText + " t interval whose coverage is checked by simulation (stats/coverage_test.go); **covers** says over what: `seeds x windows` (the crossed two-way interval: a new training seed *and* a new text window), `windows` (one seed: these windows' sampling), `seeds` (one value per seed). " +
		"The verdict is raw (p < 0.05: the interval clears its edge) and Holm-adjusted over the seven v3 claims (5% family-wise); the v3x row (RoPE extended at inference, registered after the seven) is a family of its own, and so are the two v5k rows (KERPLE's log bias, kerple-log, one training run: their intervals are over its windows only, not over seeds). Power is the chance this design clears the edge if the measured effect and spread held, averaged over the spread's uncertainty; the last column is what 80% power would take. A two-part claim shows its decisive (larger-p) part.\n\n")
	b.WriteString("| claim | v3 | v3, Holm | effect [" + confidenceText + "] vs edge | covers | p / Holm p | power | for 80% |\n|---|---|---|---|---|---|---|---|\n")
	for k, c := range g.v3 {
		d := g.v3dec[k]
		effect := "-"
		if c.Effect != nil {
			effect = fmt.Sprintf("%s vs %.2f", c.Effect.String(), c.Threshold)
		}
		pw := "-"
		if !math.IsNaN(d.Power) {
			pw = fmt.Sprintf("%.2f", d.Power)
		}
		fmt.Fprintf(b, "| %s (`%s`) | **%s** | **%s** | %s | %s | %s / %s | %s | %s |\n", c.Claim, strings.TrimSuffix(c.ID, V3Suffix), c.Verdict, orDash(d.Holm),
			effect, orDash(d.Covers), pString(d.P), pString(d.PHolm), pw, orDash(d.Need))
	}
	fmt.Fprintf(b, "\n(Power at %d simulations; its Monte Carlo error is under 1.5 points.)\n\n", decide.PowerSims)
	b.WriteString("| claim | criterion | numbers |\n|---|---|---|\n")
	for _, c := range g.v3 {
		fmt.Fprintf(b, "| %s | %s | %s |\n", c.Claim, c.Criterion, c.Evidence)
	}
	b.WriteString("\n")
}

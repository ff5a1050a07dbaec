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
	b.WriteString(confirmatoryText(seeds))
	b.WriteString("Each claim's interval is a " + confidenceText + " t interval whose coverage is checked by simulation (stats/coverage_test.go); **covers** says over what: `seeds x windows` (the crossed two-way interval: a new training seed *and* a new text window), `windows` (one seed: these windows' sampling), `seeds` (one value per seed). " +
		"The verdict is raw (p < 0.05: the interval clears its edge) and Holm-adjusted over the seven v3 claims (5% family-wise); the v3x row (RoPE extended at inference, registered after the seven) is a family of its own, as is the v3x2 row that replaces it, and so are the two v5k rows (KERPLE's log bias, kerple-log, one training run: their intervals are over its windows only, not over seeds). Power is the chance this design clears the edge if the measured effect and spread held, averaged over the spread's uncertainty; the last column is what 80% power would take. A two-part claim shows its decisive (larger-p) part.\n\n")
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
		claim := fmt.Sprintf("%s (`%s`)", c.Claim, strings.TrimSuffix(c.ID, V3Suffix))
		if d.Invalid != "" {
			claim += ". **Criterion found invalid after its run**: " + d.Invalid
		}
		if d.Beside != "" {
			claim += ". Beside it, " + d.Beside
		}
		fmt.Fprintf(b, "| %s | **%s** | **%s** | %s | %s | %s / %s | %s | %s |\n", claim, c.Verdict, orDash(d.Holm),
			effect, orDash(d.Covers), pString(d.P), pString(d.PHolm), pw, orDash(d.Need))
	}
	b.WriteString("\n" + powerErrorText(g.v3dec) + "\n\n")
	b.WriteString("| claim | criterion | numbers |\n|---|---|---|\n")
	for _, c := range g.v3 {
		fmt.Fprintf(b, "| %s | %s | %s |\n", c.Claim, c.Criterion, c.Evidence)
	}
	b.WriteString("\n")
}

// confirmatoryText says, from the registrations (registrations.json), on
// which seeds each family's verdicts are confirmatory, and what this run
// read.
func confirmatoryText(seeds []uint64) string {
	r, err := loadRegistry()
	if err != nil {
		return err.Error() + "\n\n"
	}
	var fams []string
	for _, f := range r.Families {
		fams = append(fams, fmt.Sprintf("%s %s", f.Family, seedList(f.Confirmatory)))
	}
	return fmt.Sprintf("This run's seeds: %s. A family's verdicts are confirmatory only when every seed it read is one registered for it (stages/report/registrations.json: %s); on any other seed they are labelled **(exploratory)**: they show what the criteria give and confirm nothing. A family reads its registered seeds alone when the run has them.\n\n",
		seedList(seeds), strings.Join(fams, "; "))
}

// powerErrorText states the power figures' Monte Carlo error, computed
// from the simulations run: a power p from n replications has standard
// error sqrt(p (1 - p) / n); the largest over the rows shown.
func powerErrorText(dec []V3) string {
	worst, at := 0.0, math.NaN()
	for _, d := range dec {
		if math.IsNaN(d.Power) {
			continue
		}
		if se := math.Sqrt(d.Power * (1 - d.Power) / decide.PowerSims); se >= worst {
			worst, at = se, d.Power
		}
	}
	if math.IsNaN(at) {
		return fmt.Sprintf("(Power at %d simulations; no row has a power figure.)", decide.PowerSims)
	}
	return fmt.Sprintf("(Power at %d simulations each; its Monte Carlo standard error, sqrt(p (1 - p) / %d), is at most %.1f points over these rows (at power %.2f).)", decide.PowerSims, decide.PowerSims, 100*worst, at)
}

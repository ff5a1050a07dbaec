package report

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"routebench/stages/evaluate"
	"routebench/stats"
	"routebench/stats/decide"
)

// The mechanism section (issue 39): the evaluate stage's probe rows
// (eval.json "mechanism", format 4) read as the paper's "why": far mass
// against its bound, value coherence by distance, and the mechanism claims
// v4m pre-registered in docs/statistics.md.

// V4MSuffix marks a mechanism claim's ID.
const V4MSuffix = "-v4m"

// m1Edge is M1's edge: growth of the far mass beyond T from 2T to the
// longest length, in absolute mass (docs/statistics.md, claims v4m).
const m1Edge = 0.10

// m3Band is M3's equivalence band: n* within a factor 1.5 either way.
var m3Band = math.Log(1.5)

// mechAt is r's mechanism summary at length L.
func mechAt(r *evaluate.Result, L int) (evaluate.MechanismLength, error) {
	if r.Mechanism == nil {
		return evaluate.MechanismLength{}, fmt.Errorf("%s has no mechanism probe (eval.json before format 4)", r.Variant)
	}
	for _, ml := range r.Mechanism.Lengths {
		if ml.L == L {
			return ml, nil
		}
	}
	return evaluate.MechanismLength{}, fmt.Errorf("%s has no mechanism probe at length %d", r.Variant, L)
}

// farGrowthRow is a run's per-window far mass at the longest length minus
// at 2T (the same windows: the prefixes design).
func farGrowthRow(r *evaluate.Result) ([]float64, error) {
	T := r.Protocol.Context
	lo, err := mechAt(r, 2*T)
	if err != nil {
		return nil, err
	}
	hi, err := mechAt(r, Longest(r).L)
	if err != nil {
		return nil, err
	}
	if len(lo.FarMass) != len(hi.FarMass) || len(lo.FarMass) == 0 {
		return nil, fmt.Errorf("%s: far mass on %d windows at 2T and %d at %d; M1 pairs the same windows", r.Variant, len(lo.FarMass), len(hi.FarMass), hi.L)
	}
	out := make([]float64, len(lo.FarMass))
	for w := range out {
		out[w] = hi.FarMass[w] - lo.FarMass[w]
	}
	return out, nil
}

// cohDiff is a's far coherence minus b's per window at length L.
func cohDiff(a, b *evaluate.Result, L int) ([]float64, error) {
	ma, err := mechAt(a, L)
	if err != nil {
		return nil, err
	}
	mb, err := mechAt(b, L)
	if err != nil {
		return nil, err
	}
	if len(ma.FarCoherence) != len(mb.FarCoherence) || len(ma.FarCoherence) == 0 {
		return nil, fmt.Errorf("far coherence at %d on %d and %d windows", L, len(ma.FarCoherence), len(mb.FarCoherence))
	}
	out := make([]float64, len(ma.FarCoherence))
	for w := range out {
		out[w] = ma.FarCoherence[w] - mb.FarCoherence[w]
	}
	return out, nil
}

// gatePart is a control as a part of a claim: the control must fail the
// claim's criterion. It never decides a claim whose control fails as it
// must (p 0); a control that passes makes the claim fail (p 1).
func gatePart(what string, control []v3Part) v3Part {
	passes := true
	var parts []string
	for _, c := range control {
		if !(c.p < decide.Alpha) {
			passes = false
		}
		parts = append(parts, c.String())
	}
	g := v3Part{what: what, p: 0, est: control[0].est, edge: control[0].edge, side: control[0].side}
	if passes {
		g.p = 1
		g.gate = fmt.Sprintf("control %s passes the criterion, so the criterion does not single out the claim (%s)", what, strings.Join(parts, "; "))
	} else {
		g.gate = fmt.Sprintf("control %s fails the criterion, as it must (%s)", what, strings.Join(parts, "; "))
	}
	return g
}

// mechSeedTable is y[s][w] = f(run of v at seed s) over the seeds that
// have v.
func (j v3Judge) mechSeedTable(v string, f func(r *evaluate.Result) ([]float64, error)) ([][]float64, error) {
	idx := seedsWith(j.perSeed, v)
	if len(idx) == 0 {
		return nil, fmt.Errorf("no seed has %s", v)
	}
	var y [][]float64
	for _, i := range idx {
		row, err := f(j.perSeed[i][v])
		if err != nil {
			return nil, err
		}
		y = append(y, row)
	}
	return y, nil
}

// ClaimsV4M judges the mechanism claims v4m as one Holm family.
func ClaimsV4M(perSeed []map[string]*evaluate.Result, seeds []uint64) ([]Claim, []V3) {
	reg := registrationOf(V4MSuffix)
	perSeed, seeds = reg.selectSeeds(perSeed, seeds)
	j := v3Judge{perSeed}
	specs := []v3Spec{
		{"far-mass-grows", "the far mass of rotation-only attention grows with the context, and ALiBi's does not as much (M1)",
			fmt.Sprintf("random-qk's far mass beyond T at the longest length minus at 2T (paired per seed and window): lower end > %.2f; and the same for alibi does not clear it", m1Edge),
			func() ([]v3Part, error) {
				y, err := j.mechSeedTable("random-qk", farGrowthRow)
				if err != nil {
					return nil, err
				}
				ya, err := j.mechSeedTable("alibi", farGrowthRow)
				if err != nil {
					return nil, err
				}
				main := newPart("far-mass growth, random-qk", y, m1Edge, decide.Above, false)
				ctl := newPart("far-mass growth, alibi", ya, m1Edge, decide.Above, false)
				return []v3Part{main, gatePart("alibi", []v3Part{ctl})}, nil
			}},
		{"transport-incoherent", "transporting the values decorrelates the far values the query sums (M2)",
			"random-qkv's far coherence minus random-qk's (paired per seed and window): upper end < 0 at every length from 2T (the registered seed-shift control was dropped before the run: vacuous by construction)",
			func() ([]v3Part, error) {
				idx := seedsWith(j.perSeed, "random-qk", "random-qkv")
				if len(idx) < 2 {
					return nil, fmt.Errorf("random-qk and random-qkv share %d seeds; M2 needs several", len(idx))
				}
				r0 := j.perSeed[idx[0]]["random-qk"]
				T := r0.Protocol.Context
				var ps []v3Part
				for _, l := range r0.Lengths {
					if l.L < 2*T {
						continue
					}
					var y [][]float64
					for _, i := range idx {
						row, err := cohDiff(j.perSeed[i]["random-qkv"], j.perSeed[i]["random-qk"], l.L)
						if err != nil {
							return nil, err
						}
						y = append(y, row)
					}
					ps = append(ps, newPart(fmt.Sprintf("coherence qkv - qk at %dT", l.Multiplier), y, 0, decide.Below, false))
				}
				if len(ps) == 0 {
					return nil, fmt.Errorf("no length from 2T")
				}
				// The registered control (random-qk against itself, seeds
				// paired cyclically) was dropped before the run: its mean is
				// 0 by construction (docs/statistics.md, the amendment).
				return ps, nil
			}},
		{"window-L-free", "the route's mixing window n* does not grow with the context (M3)",
			"for random-qk and random-qkv, log(n*(128T) / n*(16T)) per seed: the t interval over seeds lies within (-ln 1.5, ln 1.5)",
			func() ([]v3Part, error) { return j.windowParts() }},
	}
	claims, dec := judgeFamily(specs, seeds, reg)
	for k := range claims {
		claims[k].Version = "v4m"
	}
	return claims, dec
}

// windowParts are M3's two-sided equivalence parts: per variant, the
// upper edge (interval below ln 1.5) and the lower (above -ln 1.5).
func (j v3Judge) windowParts() ([]v3Part, error) {
	var ps []v3Part
	for _, v := range []string{"random-qk", "random-qkv"} {
		y, err := j.mechSeedTable(v, func(r *evaluate.Result) ([]float64, error) {
			T := r.Protocol.Context
			lo, okLo, err := medianRouteWindow(r, 16*T)
			if err != nil {
				return nil, err
			}
			hi, okHi, err := medianRouteWindow(r, Longest(r).L)
			if err != nil {
				return nil, err
			}
			if !okLo || !okHi {
				return nil, fmt.Errorf("%s: the median n* is censored (not below the threshold by the longest route) at 16T or at the longest length", r.Variant)
			}
			return []float64{math.Log(hi / lo)}, nil
		})
		if err != nil {
			return nil, err
		}
		// one value per seed: the crossed interval with one window is the t interval over seeds
		ps = append(ps, newPart("log n* ratio, "+v, y, m3Band, decide.Below, false), newPart("log n* ratio, "+v, y, -m3Band, decide.Above, false))
	}
	return ps, nil
}

// renderV4M writes a mechanism family's table: v4m's, or v4m2's that
// replaces M1-M3 (suffix says which; heading, its title).
func renderV4M(b *strings.Builder, claims []Claim, dec []V3, seeds []uint64, suffix, heading string) {
	if len(claims) == 0 {
		return
	}
	fam := strings.TrimPrefix(suffix, "-")
	fmt.Fprintf(b, "### %s\n\n", heading)
	if reg := registrationOf(suffix); !reg.ConfirmatoryOn(seeds) {
		fmt.Fprintf(b, "**Exploratory.** Seeds %v are not all among the seeds registered for %s (%s): these verdicts confirm nothing.\n\n", seeds, fam, seedList(reg.Confirmatory))
	}
	b.WriteString("Their own Holm family (5% family-wise over the three). Intervals as the v3 claims'; a control must fail the claim's criterion, or the claim fails. A claim of several parts shows its decisive (largest-p) part.\n\n")
	fmt.Fprintf(b, "| claim | %s | %s, Holm | decisive effect [%s] vs edge | covers | p / Holm p |\n|---|---|---|---|---|---|\n", fam, fam, confidenceText)
	for k, c := range claims {
		d := dec[k]
		effect := "-"
		if c.Effect != nil {
			effect = fmt.Sprintf("%s vs %.2f", c.Effect.String(), c.Threshold)
		}
		fmt.Fprintf(b, "| %s (`%s`) | **%s** | **%s** | %s | %s | %s / %s |\n", c.Claim, strings.TrimSuffix(c.ID, suffix), c.Verdict, orDash(d.Holm), effect, orDash(d.Covers), pString(d.P), pString(d.PHolm))
	}
	b.WriteString("\n| claim | criterion | numbers |\n|---|---|---|\n")
	for k, c := range claims {
		ev := c.Evidence
		if dec[k].Beside != "" {
			ev += "; beside it, " + dec[k].Beside
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", c.Claim, c.Criterion, ev)
	}
	b.WriteString("\n")
}

// mechCell is one variant's figure at one length, over seeds x windows.
func mechCell(evals []*evaluate.Result, L int, pick func(evaluate.MechanismLength) []float64) (stats.Estimate, int, bool) {
	return crossed(evals, func(r *evaluate.Result) []float64 {
		ml, err := mechAt(r, L)
		if err != nil {
			return nil
		}
		return pick(ml)
	})
}

// renderMechanism writes the Mechanism section: the claims, far mass
// against its bound, far coherence, mass by distance, then the copy probe.
func renderMechanism(b *strings.Builder, vs []*variantData, g seedGroups, seeds []uint64) {
	groups := byVariant(vs)
	var first *evaluate.Result
	for _, gr := range groups {
		if gr.evals[0].Mechanism != nil {
			first = gr.evals[0]
			break
		}
	}
	if first == nil {
		return
	}
	m := first.Mechanism
	T := first.Protocol.Context
	fmt.Fprintf(b, "## Mechanism: why, measured inside the trained models\n\n"+
		"The evaluate stage's own pass, at %d probe queries in the last T positions of each length's windows (under the prefixes design, the long windows' prefixes; every window of the primary protocol): "+
		"each layer's and head's exact attention row, recomputed in float64 from the pass's rotated queries and keys, transported values, bias, PaTH steps and gate, and checked against the streaming output (largest relative difference in the table). "+
		"Far = sources more than T = %d back. A cell is the mean over layers, heads and probe queries, then over seeds x windows, with its %s interval over seeds x windows (several seeds) or windows (one seed).\n\n",
		m.Queries, T, confidenceText)
	renderV4M(b, g.v4m, g.v4mdec, seeds, V4MSuffix, "Mechanism claims v4m (pre-registered in docs/statistics.md before their run; M1-M3 replaced by v4m2 below, these rows stay as run)")
	renderV4M(b, g.v4m2, g.v4m2dec, seeds, V4M2Suffix, "Mechanism claims v4m2 (pre-registered in docs/statistics.md on 2026-12-07, before their code and run: M1' against half of NoPE's growth, M2' mass-weighted, M3' the gap's window with a repeated-byte control)")
	var lengths []int
	for _, ml := range m.Lengths {
		if ml.L > T {
			lengths = append(lengths, ml.L)
		}
	}
	head := func(title, last string) {
		fmt.Fprintf(b, "%s\n\n| variant | seeds |", title)
		for _, L := range lengths {
			fmt.Fprintf(b, " %dT |", L/T)
		}
		n := len(lengths)
		if last != "" {
			fmt.Fprintf(b, " %s |", last)
			n++
		}
		b.WriteString("\n|---|---|" + strings.Repeat("---|", n) + "\n")
	}
	head("**Far mass beyond T, and beside it the bound M / (M + K e^(2 lambda)) from the same rows' logit range** (the bound holds in every row by construction; the last column counts the rows where it held, and gives the largest relative difference between a row's output and the streaming attention's)", "bound held; row check")
	for _, gr := range groups {
		if gr.evals[0].Mechanism == nil {
			continue
		}
		fmt.Fprintf(b, "| %s | %d |", gr.variant, len(gr.evals))
		held, rows, worst := 0, 0, 0.0
		for _, L := range lengths {
			e, _, ok := mechCell(gr.evals, L, func(ml evaluate.MechanismLength) []float64 { return ml.FarMass })
			bd, _, okb := mechCell(gr.evals, L, func(ml evaluate.MechanismLength) []float64 { return ml.Bound })
			if !ok || !okb {
				b.WriteString(" - |")
				continue
			}
			fmt.Fprintf(b, " %s (bound %.3g) |", estimateText(e), bd.Mean)
		}
		for _, r := range gr.evals {
			for _, ml := range r.Mechanism.Lengths {
				held += ml.BoundHeld
				rows += ml.BoundRows
				worst = math.Max(worst, ml.MaxOutErr)
			}
		}
		fmt.Fprintf(b, " %d/%d held; out diff %.1e |\n", held, rows, worst)
	}
	b.WriteString("\n")
	head("**Far value coherence** ||sum a_j v_j|| / sum a_j ||v_j|| over the far sources (1: the far values the query sums point one way; small: they cancel)", "")
	for _, gr := range groups {
		if gr.evals[0].Mechanism == nil {
			continue
		}
		fmt.Fprintf(b, "| %s | %d |", gr.variant, len(gr.evals))
		for _, L := range lengths {
			e, _, ok := mechCell(gr.evals, L, func(ml evaluate.MechanismLength) []float64 { return ml.FarCoherence })
			if !ok {
				b.WriteString(" - |")
				continue
			}
			fmt.Fprintf(b, " %s |", estimateText(e))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "**Attention by log2 distance** at the longest length (mean over seeds, windows, layers, heads and probe queries): the attention per source relative to uniform attention's, log2 (the bin's mass over the share of the row's sources it holds), the mean logit and the value coherence, a line per variant: [mass](%s), [logits](%s), [coherence](%s).\n\n",
		PlotMassByDistance, PlotLogitByDistance, PlotCoherenceByDistance)
	var panels []string
	for _, gr := range familyPanels(vs) {
		panels = append(panels, fmt.Sprintf("[%s](%s)", gr.variant, fmt.Sprintf(PlotMassByLength, familyOf(gr.variant).order)))
	}
	if len(panels) > 0 {
		fmt.Fprintf(b, "**Against the context**, one panel per family (its first variant; a line per length L, the same log2 attention per source relative to uniform's): %s.\n\n", strings.Join(panels, ", "))
	}
}

// Plots of the mechanism section.
const (
	PlotMassByDistance      = "results/mass_by_distance.png"
	PlotLogitByDistance     = "results/logit_by_distance.png"
	PlotCoherenceByDistance = "results/coherence_by_distance.png"
)

// PlotMassByLength is the family panel's file pattern (%d: the family's
// order): its first variant's attention by distance, a line per length.
const PlotMassByLength = "results/mass_by_length_%d.png"

// familyPanels are, per plot family in order, its first variant with a
// mechanism probe: the variant whose mass by distance against L the
// family's panel draws.
func familyPanels(vs []*variantData) []variantRuns {
	seen := map[int]bool{}
	var out []variantRuns
	for _, gr := range byVariant(vs) {
		f := familyOf(gr.variant)
		if seen[f.order] || gr.evals[0].Mechanism == nil {
			continue
		}
		seen[f.order] = true
		out = append(out, gr)
	}
	slices.SortFunc(out, func(a, b variantRuns) int { return familyOf(a.variant).order - familyOf(b.variant).order })
	return out
}

// massByLengthPlots draws each family panel: log2 attention per source
// relative to uniform's by distance bin, one line per length.
func massByLengthPlots(vs []*variantData, dir string) error {
	for _, gr := range familyPanels(vs) {
		f := familyOf(gr.variant)
		var series []Series
		for _, ml := range gr.evals[0].Mechanism.Lengths {
			xs, ys := binCurve(gr.evals, ml.L, func(b evaluate.MechanismBin) float64 { return math.Log2(b.Mass / b.Uniform) })
			if len(xs) > 0 {
				series = append(series, lineSeries(fmt.Sprintf("L = %dT", ml.L/gr.evals[0].Protocol.Context), xs, ys))
			}
		}
		path := fmt.Sprintf(PlotMassByLength, f.order)
		title := fmt.Sprintf("%s (%s): attention by distance, a line per length", gr.variant, f.name)
		if err := IntervalPlot(filepath.Join(dir, path), title, "log2 distance (bin upper edge + 1)", "log2 (attention per source / uniform's)", nil, series); err != nil {
			return fmt.Errorf("report: plot %s: %w", path, err)
		}
	}
	return nil
}

// lineSeries is a line without intervals (NaN bounds draw no bars).
func lineSeries(name string, xs, ys []float64) Series {
	nan := make([]float64, len(xs))
	for k := range nan {
		nan[k] = math.NaN()
	}
	return Series{Name: name, X: xs, Y: ys, Lo: nan, Hi: nan}
}

// binCurve is a variant's per-bin mean of pick at length L over its runs,
// layers and heads: x = log2 of the bin's upper distance.
func binCurve(evals []*evaluate.Result, L int, pick func(evaluate.MechanismBin) float64) (xs, ys []float64) {
	sum := map[int]float64{}
	n := map[int]int{}
	for _, r := range evals {
		ml, err := mechAt(r, L)
		if err != nil {
			continue
		}
		for _, h := range ml.Heads {
			for _, bin := range h.Bins {
				// A bin a gate or bias gives exactly no mass has log -Inf:
				// left out of the mean, so its point is not drawn.
				if y := pick(bin); !math.IsInf(y, 0) && !math.IsNaN(y) {
					sum[bin.Hi] += y
					n[bin.Hi]++
				}
			}
		}
	}
	// bins' upper edges are 0, 1, 3, 7, ...: 2^k - 1
	for hi := 0; hi < L; hi = 2*hi + 1 {
		if n[hi] == 0 {
			continue
		}
		xs = append(xs, math.Log2(float64(hi+1)))
		ys = append(ys, sum[hi]/float64(n[hi]))
	}
	return xs, ys
}

// mechanismPlots draws mass, logit and coherence by distance at the
// longest length, one line per variant.
func mechanismPlots(vs []*variantData, dir string) error {
	groups := byVariant(vs)
	picks := []struct {
		path, y string
		f       func(evaluate.MechanismBin) float64
	}{
		{PlotMassByDistance, "log2 (attention per source / uniform's)", func(b evaluate.MechanismBin) float64 { return math.Log2(b.Mass / b.Uniform) }},
		{PlotLogitByDistance, "mean logit", func(b evaluate.MechanismBin) float64 { return b.LogitMean }},
		{PlotCoherenceByDistance, "value coherence", func(b evaluate.MechanismBin) float64 { return b.Coherence }},
	}
	for _, p := range picks {
		var series []Series
		for _, gr := range groups {
			r := gr.evals[0]
			if r.Mechanism == nil {
				continue
			}
			if xs, ys := binCurve(gr.evals, Longest(r).L, p.f); len(xs) > 0 {
				series = append(series, lineSeries(gr.variant, xs, ys))
			}
		}
		if len(series) == 0 {
			return nil
		}
		if err := IntervalPlot(filepath.Join(dir, p.path), p.y+" by distance at the longest length", "log2 distance (bin upper edge + 1)", p.y, nil, series); err != nil {
			return fmt.Errorf("report: plot %s: %w", p.path, err)
		}
	}
	return massByLengthPlots(vs, dir)
}

package theory

import (
	"fmt"
	"strings"
)

// markdown renders theory.md: tables to embed in RESULTS.md, referencing the
// PNGs by file name. Every number comes from the Summary.
func markdown(s *Summary) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Theory checks (profile %s, seed %d): %s\n\n", s.Profile, s.Seed, verdict(s.Pass))
	w("Monte Carlo checks of the stylized model's claims, independent of training. Two kinds of criterion: ")
	w("an *empirical* criterion can fail for a law that violates the theorem's conclusion, and only these count as evidence; ")
	w("an *identity* is true by construction (a bound every logit satisfies, a closed form that follows from E[M] alone for i.i.d. steps) and tests the code. ")
	w("Each check runs *controls*, laws that violate the claim, which must fail a named empirical criterion; a control that passes fails its check. ")
	w("Confidence: family-wise alpha = %g per check, split (Bonferroni) over the check's empirical comparisons, one per criterion and cell, never per route length or threshold; ", s.Config.Alpha)
	w("agreement criteria (that pass when no difference is detected) would grow easier with more comparisons, so each has a control that shows it can fail.\n\n")
	w("| check | verdict | empirical criteria passed | identities | controls failing as they must | samples |\n|---|---|---|---|---|---|\n")
	for _, c := range s.Checks {
		idOK := 0
		for _, x := range c.Identities {
			if x.Pass {
				idOK++
			}
		}
		ctl := 0
		for _, x := range c.Controls {
			if x.AsItMust {
				ctl++
			}
		}
		w("| %s | **%s** | %d/%d | %d/%d hold | %d/%d | %s |\n", c.Title, c.Verdict, c.Passed, c.Empirical, idOK, len(c.Identities), ctl, len(c.Controls), c.Samples)
	}
	w("\n")
	for i, c := range s.Checks {
		w("## %d. %s: %s\n\n", i+1, c.Title, c.Verdict)
		switch c.Name {
		case "mixing":
			mdMixing(w, s.Mixing)
		case "concentration":
			mdConcentration(w, s.Concentration)
		case "farmass":
			mdFarMass(w, s.FarMass)
		case "incoherence":
			mdIncoherence(w, s.Incoherence)
		case "path":
			mdPath(w, s.Path)
		}
		w("Empirical criteria (%d/%d PASS):\n\n", c.Passed, c.Empirical)
		for _, cr := range c.Criteria {
			w("- %s **%s**: %s", verdict(cr.Pass), cr.Name, cr.Detail)
			if cr.Shows != "" {
				w(". *Shows:* %s", cr.Shows)
			}
			w("\n")
		}
		w("\nControls:\n\n")
		for _, ct := range c.Controls {
			if ct.AsItMust {
				w("- **%s** (%s) fails \"%s\", as it must: %s\n", ct.Name, ct.Law, ct.Criterion, ct.Detail)
			} else {
				w("- **%s** (%s) PASSES \"%s\" and should have failed (the check fails): %s\n", ct.Name, ct.Law, ct.Criterion, ct.Detail)
			}
		}
		w("\nIdentities (true by construction; unit tests of the code, not evidence):\n\n")
		for _, cr := range compactIdentities(c.Identities, c.Name == "mixing" || c.Name == "path") {
			w("- %s\n", cr)
		}
		w("\n")
		for _, p := range c.Plots {
			w("![%s](%s)\n\n", p, p)
		}
	}
	mdClosing(w, s)
	return b.String()
}

// compactIdentities merges identities of the same name (mixing repeats each
// per family) into one line with the count that held.
func compactIdentities(list []Criterion, prefixed bool) []string {
	type agg struct {
		n, ok        int
		fail, detail string
	}
	var order []string
	m := map[string]*agg{}
	for _, c := range list {
		name := c.Name
		if i := strings.Index(name, ": "); prefixed && i >= 0 {
			name = name[i+2:]
		}
		a, seen := m[name]
		if !seen {
			a = &agg{}
			m[name] = a
			order = append(order, name)
		}
		a.n++
		a.detail = c.Detail
		if c.Pass {
			a.ok++
		} else if a.fail == "" {
			a.fail = c.Name + ": " + c.Detail
		}
	}
	var out []string
	for _, name := range order {
		a := m[name]
		line := fmt.Sprintf("%s %s (%d/%d hold)", verdict(a.ok == a.n), name, a.ok, a.n)
		if a.fail != "" {
			line += "; first failure: " + a.fail
		} else if a.n == 1 {
			line += ": " + a.detail
		}
		out = append(out, line)
	}
	return out
}

// mdClosing sums up what each control fails and by how much, and what
// PaTH's steps do.
func mdClosing(w func(string, ...any), s *Summary) {
	w("## What the controls and PaTH's steps show\n\n")
	for _, c := range s.Checks {
		for _, ct := range c.Controls {
			w("- %s, %s: %s \"%s\" (%s).\n", c.Name, ct.Name, map[bool]string{true: "fails", false: "does NOT fail"}[ct.AsItMust], ct.Criterion, ct.Detail)
		}
	}
	if s.Path != nil {
		for _, b := range s.Path.Betas {
			w("- PaTH steps, beta = %g: per-step rates: RMS norm %.4f (contraction), direction %.4f (decorrelation), logit mean %.4f; contraction carries %.0f%%: **%s**.\n",
				b.Beta, b.RateNorm, b.RateDir, b.RateTotal, 100*b.ContractionShare, b.Carrier)
		}
	}
	w("\n")
}

func mdMixing(w func(string, ...any), r *MixingResult) {
	w("Correlation q^T P k/(|q||k|) of a query with a source of identical content at route length n, ")
	w("in simulated sequences (transport accumulated from token 1), %d independent queries per context; ", r.Queries)
	w("n* = 1 + last n with |mean corr| >= %g, interval from the simultaneous band (z = %.2f). ", r.Threshold, r.Z)
	w("rho = ||E[M]||_op; predicted n* = smallest n with rho^n < %g.\n\n", r.Threshold)
	w("| family | d | rho = \\|\\|E[M]\\|\\| | measured \\|\\|E^[M]\\|\\| | predicted n*")
	for _, L := range r.Contexts {
		w(" | n* at L=%d", L)
	}
	w(" | far E[x^2] (limit) | sum_n corr at L=%d / %d | verdict |\n|---|---|---|---|---", r.Contexts[0], r.Contexts[len(r.Contexts)-1])
	for range r.Contexts {
		w("|---")
	}
	w("|---|---|---|\n")
	rows := append(append([]MixingFamily(nil), r.Families...), r.ControlRuns...)
	for _, f := range rows {
		rho := fmt.Sprintf("%.4f", f.Rho)
		if !f.RhoExact {
			rho = fmt.Sprintf("%.4f +- %.4f (est.)", f.Rho, f.RhoSE)
		}
		w("| %s | %d | %s | %.4f +- %.3f | %d", f.Family.Name, f.Family.Dim, rho, f.StepOpNorm, f.StepNoise, f.Predicted)
		for _, c := range f.Contexts {
			if c.Found {
				w(" | %d [%d, %d]", c.Window, c.WindowLo, c.WindowHi)
			} else {
				w(" | > %d", r.MaxRoute)
			}
		}
		first, last := f.Contexts[0], f.Contexts[len(f.Contexts)-1]
		w(" | %.4f +- %.4f (%.4f) | %.2f / %.2f | %s |\n", f.Far2, f.Far2SE, f.Limit2, first.Tau, last.Tau, verdict(f.Pass))
	}
	w("\nfar E[x^2]: E[(u^T P_n u)^2] averaged over n = %d..%d, pooled over contexts; the limit is 2/(d+2) (uniform torus) or 1/d (Haar). ", r.FarFrom, r.MaxRoute)
	w("Empirical band z = %.2f (%d comparisons). Control rows (named control ...) are laws that must fail; their verdict column is that of all their criteria.\n", r.ZEmp, r.EmpiricalTests)
	w("\n||E^[P_n]||_op against rho^n, pooled over contexts. The sample mean's op norm is biased up by Monte Carlo noise, ")
	w("which sets a floor of about 0.02 here; the criterion allows %d x the split-half noise scale (in theory.json).\n\n| family", opNoiseFactor)
	for _, n := range r.OpNormGrid {
		w(" | n=%d", n)
	}
	w(" |\n|---")
	for range r.OpNormGrid {
		w("|---")
	}
	w("|\n")
	for _, f := range r.Families {
		w("| %s", f.Family.Name)
		for _, o := range f.OpNorm {
			w(" | %.3f (%.3f)", o.Measured, o.Predicted)
		}
		w(" |\n")
	}
	w("\nCells: measured (rho^n). Measured ||E^[M]||: +- is the split-half noise scale.\n\n")
}

func mdConcentration(w func(string, ...any), r *ConcentrationResult) {
	w("Far-route scores X = q^T P q for unit q, %d samples per dimension. Orthogonal: Householder reflection routes vs the exact Haar law ", r.Samples)
	w("(x_1 on S^{d-1}) and Levy's bound 2exp(-d t^2/2). Block SO(2): flat query, Gaussian angles, vs uniform-angle Haar limit and Hoeffding's bound 2exp(-d t^2/4). ")
	w("Tail cells: measured P(|X| > t) at s = d t^2, with the bound in parentheses; z = %.2f.\n\n", r.Z)
	if len(r.Dims) == 0 {
		return
	}
	w("| d | route (HH / SO2) | d Var X (HH / SO2) | KS HH (crit) | KS SO2 (crit) | KS Haar sampler | decay rate HH / SO2")
	for _, t := range r.Dims[0].Tails {
		w(" | HH s=%g", t.S)
	}
	for _, t := range r.Dims[0].Tails {
		w(" | SO2 s=%g", t.S)
	}
	w(" |\n|---|---|---|---|---|---|---")
	for range r.Dims[0].Tails {
		w("|---|---")
	}
	w("|\n")
	for _, d := range r.Dims {
		haar := "-"
		if d.KSHaar > 0 {
			haar = fmt.Sprintf("%.4f", d.KSHaar)
		}
		w("| %d | %d / %d | %.3f / %.3f | %.4f (%.4f) | %.4f (%.4f) | %s | %.3f / %.3f",
			d.D, d.HHRoute, d.SO2Route, d.HHVarD, d.SO2VarD, d.KSHouseholder, d.KSCritical1, d.KSSO2, d.KSCritical2, haar, d.HHDecay, d.SO2Decay)
		for _, t := range d.Tails {
			w(" | %.2g (%.2g)", t.HH, t.Levy)
		}
		for _, t := range d.Tails {
			w(" | %.2g (%.2g)", t.SO2, t.Hoeffding)
		}
		w(" |\n")
	}
	w("\nDecay rate: fitted -d ln P(|X|>t) / d(d t^2); the bounds decay at 0.5 (Levy) and 0.25 (Hoeffding). ")
	w("The exact Haar tail is in theory.json (haar_exact).\n\n")
}

func mdFarMass(w func(string, ...any), r *FarMassResult) {
	w("Softmax far mass rho_D with K near sources (distances 1..K) and M far sources, logits lambda * q^T P k in [-lambda, lambda], block-SO(2) transport, d = %d, %d queries. ", r.Dim, r.Samples)

	w("Cells: mean rho_D / untransported M/(M+K) / the rate M/(M + K e^Delta) with Delta from the near logits and the torus limit. ")
	w("Empirical band z = %.2f (%d comparisons).\n\n", r.ZEmp, r.EmpiricalTests)
	w("| K | lambda | Delta")
	for _, m := range r.FarCounts {
		w(" | M=%d", m)
	}
	w(" |\n|---|---|---")
	for range r.FarCounts {
		w("|---")
	}
	w("|\n")
	for _, row := range r.Rows {
		w("| %d | %g | %.3f", row.K, row.Lambda, row.Delta)
		for i := range row.Mean {
			w(" | %.4g / %.4g / %.4g", row.Mean[i], row.Untransported[i], row.Predicted[i])
		}
		w(" |\n")
	}
	w("\nRoPE-like logits (the same content under RoPE's fixed rotation), reported, not judged: mean rho_D (paired z of RoPE minus transported; positive: transport lowers far mass more).\n\n| K | lambda")
	for _, m := range r.FarCounts {
		w(" | M=%d", m)
	}
	w(" |\n|---|---")
	for range r.FarCounts {
		w("|---")
	}
	w("|\n")
	for _, row := range r.Rows {
		w("| %d | %g", row.K, row.Lambda)
		for i := range row.RoPE {
			w(" | %.4g (%+.1f)", row.RoPE[i], row.RoPEZ[i])
		}
		w(" |\n")
	}
	w("\nThe lower bound M/(M + K e^{2 lambda}) per cell is in theory.json (an identity: any logits in [-lambda, lambda] satisfy it).\n")
	if len(r.ALiBi) > 0 {
		w("\nWith an ALiBi penalty -slope * distance: mean rho_D, and the M-independent upper bound:\n\n| slope | K | lambda")
		for _, m := range r.FarCounts {
			w(" | M=%d", m)
		}
		w(" | upper bound |\n|---|---|---")
		for range r.FarCounts {
			w("|---")
		}
		w("|---|\n")
		for _, a := range r.ALiBi {
			w("| %g | %d | %g", a.Slope, a.K, a.Lambda)
			for _, v := range a.Mean {
				w(" | %.4g", v)
			}
			w(" | %.4g |\n", a.Bound)
		}
	}
	w("\n")
}

func mdIncoherence(w func(string, ...any), r *IncoherenceResult) {
	w("M far values b + noise (shared background |b|, d = %d, %d samples), aggregated with uniform weights, ", r.Dim, r.Samples)
	w("without and with value transport (block SO(2), phi = E cos theta = %.4f). ", r.Phi)
	w("Energy E|F|^2 +- SE against the exact value; ||Cov||_op is the top eigenvalue of the centred covariance E^[F F^T] - E^[F] E^[F]^T. ")
	w("Log-log slopes: %.3f without transport (coherent, ~2), %.3f with it (~1).\n\n", r.SlopePlain, r.SlopeTrans)
	w("| M | E\\|F\\|^2 plain | exact | \\|\\|Cov\\|\\|_op plain | \\|F\\|/M plain | E\\|F\\|^2 transported | exact | \\|\\|Cov\\|\\|_op transported | \\|F\\|/M transported | bound M(...) |\n")
	w("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range r.Points {
		w("| %d | %.5g +- %.2g | %.5g | %.4g | %.4f | %.5g +- %.2g | %.5g | %.4g | %.4f | %.5g |\n",
			p.M, p.Plain, p.PlainSE, p.PlainExact, p.PlainOp, p.NormPerMass, p.Trans, p.TransSE, p.TransExact, p.TransOp, p.NormPerMassT, float64(p.M)*r.BoundPerM)
	}
	w("\nHouseholder transport (non-commuting, E[H] = %.4f I, %d samples): log-log slope %.3f.\n\n| M | E\\|F\\|^2 | exact |\n|---|---|---|\n", r.HHPhi, r.HHSamples, r.HHSlope)
	for _, h := range r.HH {
		w("| %d | %.5g +- %.2g | %.5g |\n", h.M, h.Energy, h.SE, h.Exact)
	}
	if r.NoMixing != nil {
		w("\nNo-phase-mixing control (angle sd %g, %d samples): slopes %.3f plain and %.3f transported.\n", noMixingSigma, r.NoMixing.Samples, r.NoMixing.SlopePlain, r.NoMixing.SlopeTrans)
	}
	w("\n")
}

func mdPath(w func(string, ...any), r *PathResult) {
	w("Routes P_n = H_n ... H_1 of PaTH steps H = I - beta w w^T (w uniform, d = %d, %d routes per beta). ", r.Dim, r.Samples)
	w("Per-step rates: RMS norm -log(1 - beta(2-beta)/d)/2 (contraction, exact), logit mean -log(1 - beta/d) (exact), direction: fitted decay of E[cos(u, P_n u)] (decorrelation). ")
	w("Contraction share = norm rate / (norm + direction rate). beta = 2 is the orthogonal reflection; the trained path models measure beta 1.06-1.29. ")
	w("The trained model's own w_t, beta_t over held-out text are not used (the stage takes no trained input).\n\n")
	w("| beta | norm rate | direction rate | logit rate | contraction share | carried by | E\\|P u\\|^2 at n=%d | E cos at n=%d | far E[cos^2] (1/d = %.4f) |\n|---|---|---|---|---|---|---|---|---|\n",
		r.Grid[len(r.Grid)-1], r.Grid[len(r.Grid)-1], 1/float64(r.Dim))
	rows := append([]PathBeta(nil), r.Betas...)
	if r.Control != nil {
		rows = append(rows, *r.Control)
	}
	for _, b := range rows {
		k := len(b.Norm2) - 1
		w("| %g | %.5f | %.5f | %.5f | %.2f | %s | %.3g | %.3g | %.4f +- %.4f |\n", b.Beta, b.RateNorm, b.RateDir, b.RateTotal, b.ContractionShare, b.Carrier, b.Norm2[k], b.Cos[k], b.Cos2, b.Cos2SE)
	}
	w("\nThe last row (beta = %g) is the control. Empirical band z = %.2f.\n\n", pathControlBeta, r.ZEmp)
}

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
	w("Monte Carlo checks of the stylized model's claims, independent of training. ")
	w("Tolerances allow for Monte Carlo error with Bonferroni-corrected z at family-wise alpha = %g per check.\n\n", s.Config.Alpha)
	w("| check | verdict | samples |\n|---|---|---|\n")
	for _, c := range s.Checks {
		w("| %s | **%s** | %s |\n", c.Title, c.Verdict, c.Samples)
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
		}
		w("Criteria:\n\n")
		for _, cr := range c.Criteria {
			w("- %s **%s**: %s\n", verdict(cr.Pass), cr.Name, cr.Detail)
			if c.Name != "mixing" {
				continue
			}
			for _, f := range s.Mixing.Families { // each family's own criteria
				if "family "+f.Family.Name == cr.Name {
					for _, fc := range f.Criteria {
						w("  - %s %s: %s\n", verdict(fc.Pass), fc.Name, fc.Detail)
					}
				}
			}
		}
		w("\n")
		for _, p := range c.Plots {
			w("![%s](%s)\n\n", p, p)
		}
	}
	return b.String()
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
	w(" | verdict |\n|---|---|---|---|---")
	for range r.Contexts {
		w("|---")
	}
	w("|---|\n")
	for _, f := range r.Families {
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
		w(" | %s |\n", verdict(f.Pass))
	}
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
	w("Cells: mean rho_D (lower bound M/(M + K e^{2 lambda})); the bound must hold for every sample (it is deterministic).\n\n")
	w("| K | lambda")
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
		for i := range row.Mean {
			w(" | %.4g (%.3g)", row.Mean[i], row.Bound[i])
		}
		w(" |\n")
	}
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
	w("Energy E|F|^2 +- SE against the exact value; ||Cov||_op is the top eigenvalue of E^[F F^T]. ")
	w("Log-log slopes: %.3f without transport (coherent, ~2), %.3f with it (~1).\n\n", r.SlopePlain, r.SlopeTrans)
	w("| M | E\\|F\\|^2 plain | exact | \\|\\|Cov\\|\\|_op plain | \\|F\\|/M plain | E\\|F\\|^2 transported | exact | \\|\\|Cov\\|\\|_op transported | \\|F\\|/M transported | bound M(...) |\n")
	w("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range r.Points {
		w("| %d | %.5g +- %.2g | %.5g | %.4g | %.4f | %.5g +- %.2g | %.5g | %.4g | %.4f | %.5g |\n",
			p.M, p.Plain, p.PlainSE, p.PlainExact, p.PlainOp, p.NormPerMass, p.Trans, p.TransSE, p.TransExact, p.TransOp, p.NormPerMassT, float64(p.M)*r.BoundPerM)
	}
	w("\n")
}

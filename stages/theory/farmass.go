package theory

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
)

// Check 3: the far-mass lower bound. Each sample is one query with a random
// unit content u; the sources at distances 1..K (near) and K+1..K+M (far)
// carry the same content, transported through block-SO(2) steps with
// Gaussian angles, so logits lambda * u^T P u lie in [-lambda, lambda]. The
// far softmax mass rho_D is compared with M/(M + K e^{2 lambda}), and with an
// ALiBi penalty -slope*distance added to the logits.

// FarMassResult is check 3's outcome.
type FarMassResult struct {
	Pass      bool           `json:"pass"`
	Samples   int            `json:"samples"`
	Dim       int            `json:"d"`
	FarCounts []int          `json:"far_counts"`
	Rows      []FarMassRow   `json:"rows"`
	ALiBi     []FarMassALiBi `json:"alibi"`
	Criteria  []Criterion    `json:"criteria"`
	// ZEmp is the band of the empirical criteria: alpha split over
	// EmpiricalTests one-sided comparisons (one per criterion and cell).
	ZEmp           float64     `json:"z_empirical"`
	EmpiricalTests int         `json:"empirical_tests"`
	Controls       []Control   `json:"controls"`
	NoTransport    *FarMassRun `json:"no_transport_control"`
}

// FarMassRun is the no-transport control's measurements.
type FarMassRun struct {
	Sigma    float64      `json:"sigma"`
	Samples  int          `json:"samples"`
	Rows     []FarMassRow `json:"rows"`
	Criteria []Criterion  `json:"criteria"`
}

// FarMassRow is one (K, lambda) pair across the far counts, without bias.
type FarMassRow struct {
	K      int       `json:"K"`
	Lambda float64   `json:"lambda"`
	Mean   []float64 `json:"mean"` // mean rho_D per far count
	SE     []float64 `json:"se"`
	Min    []float64 `json:"min"` // smallest sample: the bound must hold for every one
	Bound  []float64 `json:"bound"`
	Tight  []float64 `json:"adversarial"` // rho_D with near logits +lambda, far -lambda
	// Untransported is M/(M+K): every logit equals lambda without transport.
	Untransported []float64 `json:"untransported"`
	// Delta is the measured near/far logit gap at M: log of the mean
	// e^logit over the near sources minus over the limit law, so that
	// rho_D would be M/(M + K e^Delta) if every far source were mixed;
	// Predicted is that rate at each M (mean over samples).
	Delta     float64   `json:"delta"`
	DeltaSE   float64   `json:"delta_se"`
	Predicted []float64 `json:"predicted"`
	// TailLog is the mean over samples of log(mean e^logit over the M_max
	// far sources / E_torus[e^logit]): 0 when rho_D follows the rate
	// M/(M + K e^Delta) at M_max.
	TailLog   float64 `json:"tail_log_ratio"`
	TailLogSE float64 `json:"tail_log_ratio_se"`
	// RoPE is the mean rho_D with RoPE-like logits (the same content turned
	// by the fixed rotation, block b by 10000^(-b/m) per token), and RoPEZ
	// the paired z of RoPE minus transported rho_D: reported, not judged
	// (the far-mass theorem says nothing about RoPE against transport).
	RoPE  []float64 `json:"rope,omitempty"`
	RoPEZ []float64 `json:"rope_minus_transported_z,omitempty"`
}

// FarMassALiBi is one (slope, K, lambda) triple with the distance penalty.
type FarMassALiBi struct {
	Slope  float64   `json:"slope"`
	K      int       `json:"K"`
	Lambda float64   `json:"lambda"`
	Mean   []float64 `json:"mean"`
	SE     []float64 `json:"se"`
	Max    []float64 `json:"max"`
	Bound  float64   `json:"upper_bound"` // M-independent upper bound
}

type farPlan struct {
	cfg  Config
	jobs []job
	// per sample: [k][lambda][m] without bias, [slope][k][lambda][m] with.
	plain [][]float64
	alibi [][]float64
	rope  [][]float64 // per sample: [k][lambda][m] with RoPE-like logits
	// per sample and (k, lambda): log mean e^l over the near sources, over
	// the M_max far sources, and under the torus limit.
	near, tail, limit [][]float64
	// the no-transport control (sigma ~ 0): the same, on ctlSamples samples.
	ctlPlain, ctlNear, ctlTail, ctlLimit [][]float64
	bound                                func(m, k int, lambda float64) (float64, error)
	sigma, ctlSigma                      float64
}

// noTransportSigma is the no-transport control's angle sd: the transport is
// the identity to rounding, so every logit is lambda.
const noTransportSigma = 1e-12

// ctlSamples is the control's sample count: its far mass is M/(M+K) in
// every sample, so a few show it.
func ctlSamples(fc FarMassConfig) int { return min(fc.Samples, 8) }

func planFarMass(cfg Config) *farPlan {
	fc := cfg.FarMass
	nc := ctlSamples(fc)
	p := &farPlan{cfg: cfg, bound: farMassBound, sigma: fc.Sigma, ctlSigma: noTransportSigma,
		plain: make([][]float64, fc.Samples), alibi: make([][]float64, fc.Samples), rope: make([][]float64, fc.Samples),
		near: make([][]float64, fc.Samples), tail: make([][]float64, fc.Samples), limit: make([][]float64, fc.Samples),
		ctlPlain: make([][]float64, nc), ctlNear: make([][]float64, nc), ctlTail: make([][]float64, nc), ctlLimit: make([][]float64, nc)}
	start := 0
	parts := splitCounts(fc.Samples, fc.Chunks)
	for _, cnt := range parts {
		lo, hi := start, start+cnt
		start = hi
		p.jobs = append(p.jobs, job{
			note: fmt.Sprintf("far mass: samples %d..%d of %d (up to %d far sources)", lo+1, hi, fc.Samples, fc.FarCounts[len(fc.FarCounts)-1]),
			run: func(ctx context.Context) error {
				for i := lo; i < hi; i++ {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					fs := farMassSample(fc, p.sigma, true, newRNG(cfg.Seed, streamFarMass, uint64(i)))
					p.plain[i], p.alibi[i], p.near[i], p.tail[i], p.limit[i], p.rope[i] = fs.plain, fs.alibi, fs.near, fs.tail, fs.limit, fs.rope
				}
				return nil
			},
		})
	}
	p.jobs = append(p.jobs, job{
		note: fmt.Sprintf("far mass: no-transport control, %d samples", nc),
		run: func(ctx context.Context) error {
			for i := 0; i < nc; i++ {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				fs := farMassSample(fc, p.ctlSigma, false, newRNG(cfg.Seed, streamFarMass, uint64(i), 0xC0))
				p.ctlPlain[i], p.ctlNear[i], p.ctlTail[i], p.ctlLimit[i] = fs.plain, fs.near, fs.tail, fs.limit
			}
			return nil
		},
	})
	return p
}

// transportCorr returns c_n = u^T P_n u for n = 1..n (index n-1), where P_n is
// the block-SO(2) transport over n steps with Gaussian angles and u a random
// unit vector: c_n = sum_b |u_b|^2 cos(T_{n,b}), T the accumulated angles.
func transportCorr(rng *rand.Rand, d, n int, sigma float64) (c, w []float64) {
	m := d / 2
	u := randomUnit(rng, make([]float64, d))
	w = make([]float64, m)
	for b := range w {
		w[b] = u[2*b]*u[2*b] + u[2*b+1]*u[2*b+1]
	}
	theta := make([]float64, m)
	c = make([]float64, n)
	for k := 0; k < n; k++ {
		var s float64
		for b := range theta {
			theta[b] += sigma * rng.NormFloat64()
			s += w[b] * math.Cos(theta[b])
		}
		c[k] = s
	}
	return c, w
}

// farSample is one query's far-mass measurements, per (K, lambda) (and
// slope for ALiBi), in farMassSample's loop order.
type farSample struct {
	plain, alibi      []float64 // rho_D per far count
	rope              []float64 // rho_D per far count with RoPE-like logits
	near, tail, limit []float64 // log mean e^logit: near sources, all M_max far sources, torus limit
}

func farMassSample(fc FarMassConfig, sigma float64, withALiBi bool, rng *rand.Rand) farSample {
	kmax, mmax := fc.Near[len(fc.Near)-1], fc.FarCounts[len(fc.FarCounts)-1]
	c, w := transportCorr(rng, fc.Dim, kmax+mmax, sigma)
	var out farSample
	for _, k := range fc.Near {
		for _, lam := range fc.Lambdas {
			out.plain = append(out.plain, farMassCurve(c, k, fc.FarCounts, func(n int, x float64) float64 { return lam * x })...)
			out.near = append(out.near, logMeanExp(c[:k], lam))
			out.tail = append(out.tail, logMeanExp(c[k:k+mmax], lam))
			out.limit = append(out.limit, logTorusMGF(w, lam))
		}
	}
	if !withALiBi {
		return out
	}
	cr := ropeCorr(w, kmax+mmax)
	for _, k := range fc.Near {
		for _, lam := range fc.Lambdas {
			out.rope = append(out.rope, farMassCurve(cr, k, fc.FarCounts, func(n int, x float64) float64 { return lam * x })...)
		}
	}
	for _, slope := range fc.ALiBiSlopes {
		for _, k := range fc.Near {
			for _, lam := range fc.Lambdas {
				out.alibi = append(out.alibi, farMassCurve(c, k, fc.FarCounts, func(n int, x float64) float64 { return lam*x - slope*float64(n) })...)
			}
		}
	}
	return out
}

// ropeCorr is u^T R^n u = sum_b w_b cos(n theta_b) for n = 1..n, RoPE's
// fixed rotation with theta_b = ropeBase^(-b/m), by the angle-addition
// recurrence (rounding grows like n * 1e-16, far below what matters here).
func ropeCorr(w []float64, n int) []float64 {
	m := len(w)
	c := make([]float64, m)
	sn := make([]float64, m)
	dc := make([]float64, m)
	ds := make([]float64, m)
	for b := range w {
		c[b] = 1
		ds[b], dc[b] = math.Sincos(math.Pow(ropeBase, -float64(b)/float64(m)))
	}
	out := make([]float64, n)
	for k := 0; k < n; k++ {
		var x float64
		for b := range w {
			c[b], sn[b] = c[b]*dc[b]-sn[b]*ds[b], sn[b]*dc[b]+c[b]*ds[b]
			x += w[b] * c[b]
		}
		out[k] = x
	}
	return out
}

// logMeanExp is log(mean_j e^{lambda c_j}), shifted by the maximum.
func logMeanExp(c []float64, lambda float64) float64 {
	mx := math.Inf(-1)
	for _, x := range c {
		mx = math.Max(mx, lambda*x)
	}
	var s float64
	for _, x := range c {
		s += math.Exp(lambda*x - mx)
	}
	return mx + math.Log(s/float64(len(c)))
}

// logTorusMGF is log E[e^{lambda x}] for x = sum_b w_b cos(S_b) with the
// S_b independent and uniform (the limit of block-SO(2) transport):
// sum_b log I0(lambda w_b).
func logTorusMGF(w []float64, lambda float64) float64 {
	var s float64
	for _, wb := range w {
		s += logBesselI0(lambda * wb)
	}
	return s
}

// logBesselI0 is log I0(x), from the power series sum_k (x^2/4)^k/(k!)^2,
// whose terms are positive, so it is accurate for the x <= 50 the config
// allows (lambda <= 50, w_b <= 1).
func logBesselI0(x float64) float64 {
	q := x * x / 4
	term, sum := 1.0, 1.0
	for k := 1; k < 500; k++ {
		term *= q / float64(k*k)
		sum += term
		if term < 1e-17*sum {
			break
		}
	}
	return math.Log(sum)
}

// farMassCurve is the softmax far mass for near sources at distances 1..k and
// far sources at k+1..k+M, for each M in counts (increasing). logit(n, c_n)
// gives the logit of the source at distance n; logits are shifted by their
// maximum over the near set and the first far source, and the far sum is
// accumulated in distance order, so the result for each M is a prefix.
func farMassCurve(c []float64, k int, counts []int, logit func(n int, x float64) float64) []float64 {
	shift := math.Inf(-1)
	for n := 1; n <= k+1; n++ {
		shift = math.Max(shift, logit(n, c[n-1]))
	}
	var near, far float64
	for n := 1; n <= k; n++ {
		near += math.Exp(logit(n, c[n-1]) - shift)
	}
	out := make([]float64, len(counts))
	mi := 0
	for m := 1; mi < len(counts); m++ {
		n := k + m
		far += math.Exp(logit(n, c[n-1]) - shift)
		if m == counts[mi] {
			out[mi] = far / (far + near)
			mi++
		}
	}
	return out
}

// Names of check 3's empirical criteria.
const (
	critBenefit = "transport lowers far mass below untransported M/(M+K) at every M"
	critRate    = "far mass tends to 1 at the rate M/(M + K e^Delta)"
	critALiBi   = "ALiBi far mass below rotation-only at the largest M"
)

func (p *farPlan) finish() (*FarMassResult, error) {
	fc := p.cfg.FarMass
	nm := len(fc.FarCounts)
	nRows := len(fc.Near) * len(fc.Lambdas)
	nEmp := nRows*(nm+1) + len(fc.ALiBiSlopes)*nRows
	res := &FarMassResult{Samples: fc.Samples, Dim: fc.Dim, FarCounts: fc.FarCounts,
		ZEmp: bonferroniZ(p.cfg.Alpha, nEmp), EmpiricalTests: nEmp}
	rows, cr, err := p.rows(p.plain, p.near, p.tail, p.limit, res.ZEmp)
	if err != nil {
		return nil, err
	}
	res.Rows = rows
	for ri := range res.Rows {
		r := &res.Rows[ri]
		for mi := range fc.FarCounts {
			var ro, diff moments
			for s := range p.rope {
				ro.add(p.rope[s][ri*nm+mi])
				diff.add(p.rope[s][ri*nm+mi] - p.plain[s][ri*nm+mi])
			}
			r.RoPE = append(r.RoPE, ro.mean())
			r.RoPEZ = append(r.RoPEZ, finiteOr0(diff.mean()/diff.se()))
		}
	}

	// ALiBi below rotation-only is an identity: the penalty lowers every far
	// logit of the same sample, which lowers the far mass for any logits, so
	// no law can fail it (it tests the code, not the theory).
	idx := 0
	worstALiBi, vacuous, cells := math.Inf(-1), 0, 0
	worstBelow := math.Inf(1)
	for _, slope := range fc.ALiBiSlopes {
		ri := 0
		for _, k := range fc.Near {
			for _, lam := range fc.Lambdas {
				a := FarMassALiBi{Slope: slope, K: k, Lambda: lam, Bound: alibiFarMassBound(k, lam, slope)}
				for mi := range fc.FarCounts {
					var mo moments
					mx := math.Inf(-1)
					for s := range p.alibi {
						v := p.alibi[s][idx*nm+mi]
						mo.add(v)
						mx = math.Max(mx, v)
					}
					a.Mean, a.SE, a.Max = append(a.Mean, mo.mean()), append(a.SE, mo.se()), append(a.Max, mx)
					worstALiBi = math.Max(worstALiBi, mx-a.Bound)
					cr.check("ALiBi far mass bounded independently of M", mx <= a.Bound*(1+1e-12),
						"slope=%g K=%d lambda=%g M=%d: largest rho_D %.6g above the M-free bound %.6g", slope, k, lam, fc.FarCounts[mi], mx, a.Bound)
				}
				cells++
				if a.Bound >= 0.98 {
					vacuous++
				}
				// Paired by sample: rotation-only minus ALiBi at the largest M.
				var diff moments
				for s := range p.alibi {
					diff.add(p.plain[s][ri*nm+nm-1] - p.alibi[s][idx*nm+nm-1])
				}
				t := diff.mean() / math.Max(diff.se(), 1e-300)
				worstBelow = math.Min(worstBelow, t)
				cr.check(critALiBi, diff.mean() > res.ZEmp*diff.se() && diff.mean() > 1e-9,
					"slope=%g K=%d lambda=%g M=%d: rotation-only minus ALiBi = %.4g +- %.2g (%.1f SE, needs > %.2f)", slope, k, lam, fc.FarCounts[nm-1], diff.mean(), diff.se(), t, res.ZEmp)
				res.ALiBi = append(res.ALiBi, a)
				idx++
				ri++
			}
		}
	}
	if len(fc.ALiBiSlopes) > 0 {
		cr.summary("ALiBi far mass bounded independently of M", "every sample below the bound; largest rho_D - bound = %.3g; the bound is vacuous (>= 0.98) in %d of %d cells", worstALiBi, vacuous, cells)
		cr.summary(critALiBi, "all %d cells: rotation-only minus ALiBi at M=%d is at least %.1f SE above 0 (needs > %.2f)", cells, fc.FarCounts[nm-1], worstBelow, res.ZEmp)
	}
	res.Criteria = cr.list

	// The no-transport control must fail the benefit criterion.
	ctlRows, ctlCr, err := p.rows(p.ctlPlain, p.ctlNear, p.ctlTail, p.ctlLimit, res.ZEmp)
	if err != nil {
		return nil, err
	}
	res.NoTransport = &FarMassRun{Sigma: p.ctlSigma, Samples: len(p.ctlPlain), Rows: ctlRows, Criteria: ctlCr.list}
	// It must fail the rate as well: its far logits stay at lambda, never
	// reaching the torus limit's mean e^logit.
	res.Controls = nil
	for _, crit := range []string{critBenefit, critRate} {
		ctl := newControl("control no transport", fmt.Sprintf("sigma = %g: every logit is lambda", p.ctlSigma), crit, ctlCr.list)
		ctl.Detail += "; empirical criteria failed: " + failedEmpirical(ctlCr.list)
		res.Controls = append(res.Controls, ctl)
	}
	res.Pass = cr.pass() && controlsFailed(res.Controls)
	return res, nil
}

// rows evaluates the far-mass cells of one set of samples: the bound
// (identities), the benefit against untransported logits and the rate.
func (p *farPlan) rows(plain, near, tail, limit [][]float64, zE float64) ([]FarMassRow, *criteria, error) {
	fc := p.cfg.FarMass
	nm := len(fc.FarCounts)
	cr := &criteria{}
	cr.empirical(critBenefit, "mean rho_D with transport is significantly below M/(M+K), the far mass of untransported (equal) logits, in every (K, lambda, M) cell")
	cr.empirical(critRate, "at the largest M, log of the far sources' mean e^logit equals the torus limit's, so rho_D = M/(M + K e^Delta) with Delta measured from the near logits")
	var rows []FarMassRow
	worstMargin, worstBenefit, worstRate := math.Inf(1), math.Inf(1), 0.0
	idx := 0
	for _, k := range fc.Near {
		for _, lam := range fc.Lambdas {
			row := FarMassRow{K: k, Lambda: lam}
			// The adversarial case goes through the same code path as the samples.
			adv := make([]float64, k+fc.FarCounts[nm-1])
			for i := range adv {
				adv[i] = -1
				if i < k {
					adv[i] = 1
				}
			}
			tight := farMassCurve(adv, k, fc.FarCounts, func(n int, x float64) float64 { return lam * x })
			var delta, rate moments
			for s := range plain {
				delta.add(near[s][idx] - limit[s][idx])
				rate.add(tail[s][idx] - limit[s][idx])
			}
			row.Delta, row.DeltaSE = delta.mean(), delta.se()
			row.TailLog, row.TailLogSE = rate.mean(), rate.se()
			for mi, m := range fc.FarCounts {
				var mo, ben, pred moments
				mn := math.Inf(1)
				untr := float64(m) / float64(m+k)
				for s := range plain {
					v := plain[s][idx*nm+mi]
					mo.add(v)
					ben.add(untr - v)
					pred.add(float64(m) / (float64(m) + float64(k)*math.Exp(near[s][idx]-limit[s][idx])))
					mn = math.Min(mn, v)
				}
				b, err := p.bound(m, k, lam)
				if err != nil {
					return nil, nil, err
				}
				row.Mean, row.SE, row.Min = append(row.Mean, mo.mean()), append(row.SE, mo.se()), append(row.Min, mn)
				row.Bound, row.Tight = append(row.Bound, b), append(row.Tight, tight[mi])
				row.Untransported, row.Predicted = append(row.Untransported, untr), append(row.Predicted, pred.mean())
				// The bound is deterministic: it must hold for every sample, up to rounding.
				tol := 1e-12 * math.Max(b, 1e-300)
				worstMargin = math.Min(worstMargin, mn-b)
				cr.check("rho_D >= M/(M + K e^{2 lambda}) for every sample", mn >= b-tol,
					"K=%d lambda=%g M=%d: smallest rho_D %.6g below the bound %.6g", k, lam, m, mn, b)
				cr.check("bound attained by adversarial logits (near +lambda, far -lambda)", math.Abs(tight[mi]-b) <= 1e-9*math.Max(b, 1e-300)+1e-300,
					"K=%d lambda=%g M=%d: adversarial rho_D %.12g vs bound %.12g", k, lam, m, tight[mi], b)
				t := ben.mean() / math.Max(ben.se(), 1e-300)
				worstBenefit = math.Min(worstBenefit, t)
				cr.check(critBenefit, ben.mean() > zE*ben.se() && ben.mean() > 1e-9,
					"K=%d lambda=%g M=%d: M/(M+K) - rho_D = %.3g +- %.2g (%.1f SE, needs > %.2f)", k, lam, m, ben.mean(), ben.se(), t, zE)
			}
			rt := math.Abs(rate.mean()) / math.Max(rate.se(), 1e-300)
			worstRate = math.Max(worstRate, rt)
			cr.check(critRate, math.Abs(rate.mean()) <= zE*rate.se()+1e-9,
				"K=%d lambda=%g M=%d: log(far mean e^logit / torus limit) = %.4g +- %.2g (%.1f SE, tolerance %.2f); measured rho_D %.5g vs rate %.5g (Delta = %.3f)",
				k, lam, fc.FarCounts[nm-1], rate.mean(), rate.se(), rt, zE, row.Mean[nm-1], row.Predicted[nm-1], row.Delta)
			rows = append(rows, row)
			idx++
		}
	}
	cr.summary("rho_D >= M/(M + K e^{2 lambda}) for every sample",
		"%d samples x %d (K, lambda, M) cells; smallest margin min(rho_D) - bound = %.3g", len(plain), len(rows)*nm, worstMargin)
	cr.summary("bound attained by adversarial logits (near +lambda, far -lambda)", "equal to 1e-9 relative in all %d cells", len(rows)*nm)
	cr.summary(critBenefit, "all %d cells: M/(M+K) - rho_D at least %.1f SE above 0 (needs > %.2f)", len(rows)*nm, worstBenefit, zE)
	cr.summary(critRate, "all %d (K, lambda) at M=%d: worst |log ratio| = %.1f SE (tolerance %.2f)", len(rows), fc.FarCounts[nm-1], worstRate, zE)
	return rows, cr, nil
}

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
	bound func(m, k int, lambda float64) (float64, error)
}

func planFarMass(cfg Config) *farPlan {
	fc := cfg.FarMass
	p := &farPlan{cfg: cfg, bound: farMassBound,
		plain: make([][]float64, fc.Samples), alibi: make([][]float64, fc.Samples)}
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
					p.plain[i], p.alibi[i] = farMassSample(fc, newRNG(cfg.Seed, streamFarMass, uint64(i)))
				}
				return nil
			},
		})
	}
	return p
}

// transportCorr returns c_n = u^T P_n u for n = 1..n (index n-1), where P_n is
// the block-SO(2) transport over n steps with Gaussian angles and u a random
// unit vector: c_n = sum_b |u_b|^2 cos(T_{n,b}), T the accumulated angles.
func transportCorr(rng *rand.Rand, d, n int, sigma float64) []float64 {
	m := d / 2
	u := randomUnit(rng, make([]float64, d))
	w := make([]float64, m)
	for b := range w {
		w[b] = u[2*b]*u[2*b] + u[2*b+1]*u[2*b+1]
	}
	theta := make([]float64, m)
	c := make([]float64, n)
	for k := 0; k < n; k++ {
		var s float64
		for b := range theta {
			theta[b] += sigma * rng.NormFloat64()
			s += w[b] * math.Cos(theta[b])
		}
		c[k] = s
	}
	return c
}

func farMassSample(fc FarMassConfig, rng *rand.Rand) (plain, alibi []float64) {
	kmax, mmax := fc.Near[len(fc.Near)-1], fc.FarCounts[len(fc.FarCounts)-1]
	c := transportCorr(rng, fc.Dim, kmax+mmax, fc.Sigma)
	for _, k := range fc.Near {
		for _, lam := range fc.Lambdas {
			plain = append(plain, farMassCurve(c, k, fc.FarCounts, func(n int, x float64) float64 { return lam * x })...)
		}
	}
	for _, slope := range fc.ALiBiSlopes {
		for _, k := range fc.Near {
			for _, lam := range fc.Lambdas {
				alibi = append(alibi, farMassCurve(c, k, fc.FarCounts, func(n int, x float64) float64 { return lam*x - slope*float64(n) })...)
			}
		}
	}
	return plain, alibi
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

func (p *farPlan) finish() (*FarMassResult, error) {
	fc := p.cfg.FarMass
	nm := len(fc.FarCounts)
	res := &FarMassResult{Samples: fc.Samples, Dim: fc.Dim, FarCounts: fc.FarCounts}
	var cr criteria
	worstMargin := math.Inf(1)
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
			for mi, m := range fc.FarCounts {
				var mo moments
				mn := math.Inf(1)
				for s := range p.plain {
					v := p.plain[s][idx*nm+mi]
					mo.add(v)
					mn = math.Min(mn, v)
				}
				b, err := p.bound(m, k, lam)
				if err != nil {
					return nil, err
				}
				row.Mean, row.SE, row.Min = append(row.Mean, mo.mean()), append(row.SE, mo.se()), append(row.Min, mn)
				row.Bound, row.Tight = append(row.Bound, b), append(row.Tight, tight[mi])
				// The bound is deterministic: it must hold for every sample, up to rounding.
				tol := 1e-12 * math.Max(b, 1e-300)
				worstMargin = math.Min(worstMargin, mn-b)
				cr.check("rho_D >= M/(M + K e^{2 lambda}) for every sample", mn >= b-tol,
					"K=%d lambda=%g M=%d: smallest rho_D %.6g below the bound %.6g", k, lam, m, mn, b)
				cr.check("bound attained by adversarial logits (near +lambda, far -lambda)", math.Abs(tight[mi]-b) <= 1e-9*math.Max(b, 1e-300)+1e-300,
					"K=%d lambda=%g M=%d: adversarial rho_D %.12g vs bound %.12g", k, lam, m, tight[mi], b)
			}
			res.Rows = append(res.Rows, row)
			idx++
		}
	}
	cr.summary("rho_D >= M/(M + K e^{2 lambda}) for every sample",
		"%d samples x %d (K, lambda, M) cells; smallest margin min(rho_D) - bound = %.3g", fc.Samples, len(res.Rows)*nm, worstMargin)
	cr.summary("bound attained by adversarial logits (near +lambda, far -lambda)", "equal to 1e-9 relative in all %d cells", len(res.Rows)*nm)
	// Without bias the far mass must reach 1 where the bound forces it.
	for _, r := range res.Rows {
		if r.Bound[nm-1] >= 0.5 {
			cr.check("rotation-only far mass tends to 1 as M grows", r.Mean[nm-1] >= r.Bound[nm-1] && r.Mean[nm-1] > r.Mean[0],
				"K=%d lambda=%g: mean rho_D %.4f at M=%d vs %.4f at M=%d", r.K, r.Lambda, r.Mean[nm-1], fc.FarCounts[nm-1], r.Mean[0], fc.FarCounts[0])
		}
	}
	var near1 []string
	for _, r := range res.Rows {
		if r.Bound[nm-1] >= 0.5 {
			near1 = append(near1, fmt.Sprintf("K=%d,l=%g: %.4f", r.K, r.Lambda, r.Mean[nm-1]))
		}
	}
	cr.summary("rotation-only far mass tends to 1 as M grows", "mean rho_D at M=%d where the bound >= 0.5: %v", fc.FarCounts[nm-1], near1)

	idx = 0
	worstALiBi := math.Inf(-1)
	for _, slope := range fc.ALiBiSlopes {
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
				res.ALiBi = append(res.ALiBi, a)
				idx++
			}
		}
	}
	if len(fc.ALiBiSlopes) > 0 {
		cr.summary("ALiBi far mass bounded independently of M", "every sample below the bound; largest rho_D - bound = %.3g", worstALiBi)
	}
	res.Criteria = cr.list
	res.Pass = cr.pass()
	return res, nil
}

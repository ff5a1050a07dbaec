package theory

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
)

// Check 5: PaTH's own steps. PaTH's H = I - beta w w^T with beta in (0, 2)
// is not orthogonal (eigenvalue 1 - beta along w), so the product
// P_n = H_n ... H_1 can forget in two ways: its norm shrinks (contraction)
// and its direction turns away from the query (decorrelation). With w
// uniform on the sphere both have closed-form means:
//
//	E|P_n u|^2   = (1 - beta(2-beta)/d)^n   (contraction)
//	E[u^T P_n u] = (1 - beta/d)^n           (all forgetting of the logit)
//
// and the cosine between u and P_n u (the direction alone) is measured. The
// per-step rates say which carries the forgetting: r_norm = -log E|P_n u|^2
// / 2n, r_dir from the fitted decay of E[cos]. The trained path model's own
// w_t and beta_t are not used here (the stage has no trained input).

// PathConfig sizes check 5.
type PathConfig struct {
	Dim      int       `json:"dim"`
	Betas    []float64 `json:"betas"`     // step strengths, each in (0, 2]
	Samples  int       `json:"samples"`   // independent routes per beta
	MaxRoute int       `json:"max_route"` // route lengths up to this are measured
	Chunks   int       `json:"chunks"`
}

// PathResult is check 5's outcome.
type PathResult struct {
	Pass     bool        `json:"pass"`
	Dim      int         `json:"d"`
	Samples  int         `json:"samples"`
	Grid     []int       `json:"grid"`
	ZEmp     float64     `json:"z_empirical"`
	Betas    []PathBeta  `json:"betas"`
	Criteria []Criterion `json:"criteria"`
	Controls []Control   `json:"controls"`
	Control  *PathBeta   `json:"control_run"`
}

// PathBeta is one step strength's measurements.
type PathBeta struct {
	Beta    float64   `json:"beta"`
	Norm2   []float64 `json:"norm2"` // E|P_n u|^2 per grid point
	Norm2SE []float64 `json:"norm2_se"`
	Logit   []float64 `json:"logit"` // E[u^T P_n u]
	LogitSE []float64 `json:"logit_se"`
	Cos     []float64 `json:"cos"` // E[cos(u, P_n u)]
	CosSE   []float64 `json:"cos_se"`
	Cos2    float64   `json:"cos2_far"` // E[cos^2] at the longest route; 1/d when the direction is uniform
	Cos2SE  float64   `json:"cos2_far_se"`
	// Per-step rates: of the RMS norm (exact), of the logit's mean (exact),
	// and of the direction's mean cosine (fitted).
	RateNorm  float64 `json:"rate_norm"`
	RateTotal float64 `json:"rate_total"`
	RateDir   float64 `json:"rate_direction"`
	// ContractionShare is RateNorm / (RateNorm + RateDir); Carrier names
	// what carries the forgetting: contraction (share >= 2/3),
	// decorrelation (<= 1/3) or both.
	ContractionShare float64     `json:"contraction_share"`
	Carrier          string      `json:"carrier"`
	Criteria         []Criterion `json:"criteria"`
}

type pathAcc struct {
	norm2, logit, cos []moments
	cos2              moments
}

type pathPlan struct {
	cfg   Config
	grid  []int
	betas []float64 // the config's, then the control's
	accs  [][]*pathAcc
	jobs  []job
}

// pathControlBeta is the control's step strength: so weak that the
// direction does not reach the uniform law within the longest route.
const pathControlBeta = 0.02

const critPathDir = "the direction of P_n u becomes uniform (E[cos^2] = 1/d at the longest route)"

func planPath(cfg Config) *pathPlan {
	pc := cfg.Path
	p := &pathPlan{cfg: cfg, grid: pathGrid(pc.MaxRoute)}
	p.betas = append(append(p.betas, pc.Betas...), pathControlBeta)
	p.accs = make([][]*pathAcc, len(p.betas))
	for bi, beta := range p.betas {
		for ci, cnt := range splitCounts(pc.Samples, pc.Chunks) {
			acc := &pathAcc{}
			p.accs[bi] = append(p.accs[bi], acc)
			bi, ci, cnt, beta := bi, ci, cnt, beta
			p.jobs = append(p.jobs, job{
				note: fmt.Sprintf("path steps: beta=%g chunk %d (%d routes)", beta, ci+1, cnt),
				run: func(ctx context.Context) error {
					return runPathChunk(ctx, pc.Dim, beta, cnt, p.grid, acc, newRNG(cfg.Seed, streamPath, uint64(bi), uint64(ci)))
				},
			})
		}
	}
	return p
}

// pathGrid is 0, then powers of two and their midpoints, up to nmax.
func pathGrid(nmax int) []int {
	g := []int{0}
	for n := 1; n <= nmax; n *= 2 {
		g = append(g, n)
		if m := n + n/2; n >= 2 && m <= nmax {
			g = append(g, m)
		}
	}
	if g[len(g)-1] != nmax {
		g = append(g, nmax)
	}
	return g
}

func runPathChunk(ctx context.Context, d int, beta float64, routes int, grid []int, acc *pathAcc, rng *rand.Rand) error {
	nmax := grid[len(grid)-1]
	acc.norm2 = make([]moments, len(grid))
	acc.logit = make([]moments, len(grid))
	acc.cos = make([]moments, len(grid))
	u := make([]float64, d)
	x := make([]float64, d)
	w := make([]float64, d)
	for q := 0; q < routes; q++ {
		if q%64 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		randomUnit(rng, u)
		copy(x, u)
		gi := 0
		for n := 0; n <= nmax; n++ {
			if n > 0 {
				randomUnit(rng, w)
				f := beta * dot(w, x)
				for i := range x {
					x[i] -= f * w[i]
				}
			}
			if n != grid[gi] {
				continue
			}
			n2, l := dot(x, x), dot(u, x)
			c := l / math.Sqrt(n2)
			acc.norm2[gi].add(n2)
			acc.logit[gi].add(l)
			acc.cos[gi].add(c)
			if n == nmax {
				acc.cos2.add(c * c)
			}
			gi++
		}
	}
	return nil
}

func (p *pathPlan) finish() *PathResult {
	pc := p.cfg.Path
	d := float64(pc.Dim)
	nb := len(pc.Betas)
	// One empirical comparison per beta (the direction law).
	res := &PathResult{Dim: pc.Dim, Samples: pc.Samples, Grid: p.grid, ZEmp: bonferroniZ(p.cfg.Alpha, nb)}
	zID := bonferroniZ(p.cfg.Alpha, 2*len(p.grid)*(nb+1))
	res.Pass = true
	for bi, beta := range p.betas {
		pb := PathBeta{Beta: beta}
		var cr criteria
		cr.empirical(critPathDir, "the direction of the product forgets the query: E[cos^2(u, P_n u)] at the longest route equals 1/d, its value for a uniform direction")
		cn := 1 - beta*(2-beta)/d
		ct := 1 - beta/d
		var ns, lc []float64
		for gi, n := range p.grid {
			var n2, lg, cs moments
			for _, a := range p.accs[bi] {
				n2.merge(a.norm2[gi])
				lg.merge(a.logit[gi])
				cs.merge(a.cos[gi])
			}
			pb.Norm2, pb.Norm2SE = append(pb.Norm2, n2.mean()), append(pb.Norm2SE, n2.se())
			pb.Logit, pb.LogitSE = append(pb.Logit, lg.mean()), append(pb.LogitSE, lg.se())
			pb.Cos, pb.CosSE = append(pb.Cos, cs.mean()), append(pb.CosSE, cs.se())
			en, el := math.Pow(cn, float64(n)), math.Pow(ct, float64(n))
			cr.check("E|P_n u|^2 = (1 - beta(2-beta)/d)^n", math.Abs(n2.mean()-en) <= zID*n2.se()+1e-12,
				"n=%d: %.5f +- %.2g vs exact %.5f", n, n2.mean(), n2.se(), en)
			cr.check("E[u^T P_n u] = (1 - beta/d)^n", math.Abs(lg.mean()-el) <= zID*lg.se()+1e-12,
				"n=%d: %.5f +- %.2g vs exact %.5f", n, lg.mean(), lg.se(), el)
			if n > 0 && cs.mean() > math.Max(0.05, 5*cs.se()) {
				ns, lc = append(ns, float64(n)), append(lc, math.Log(cs.mean()))
			}
		}
		var c2 moments
		for _, a := range p.accs[bi] {
			c2.merge(a.cos2)
		}
		pb.Cos2, pb.Cos2SE = c2.mean(), c2.se()
		diff := math.Abs(pb.Cos2 - 1/d)
		cr.check(critPathDir, diff <= res.ZEmp*pb.Cos2SE,
			"beta=%g n=%d: E[cos^2] = %.4f +- %.2g vs 1/d = %.4f: |diff| = %.1f SE (tolerance %.2f SE)", beta, p.grid[len(p.grid)-1], pb.Cos2, pb.Cos2SE, 1/d, diff/math.Max(pb.Cos2SE, 1e-300), res.ZEmp)
		cr.summary("E|P_n u|^2 = (1 - beta(2-beta)/d)^n", "all %d route lengths within z = %.2f SE", len(p.grid), zID)
		cr.summary("E[u^T P_n u] = (1 - beta/d)^n", "all %d route lengths within z = %.2f SE", len(p.grid), zID)
		pb.RateNorm, pb.RateTotal = math.Max(0, -math.Log(cn)/2), -math.Log(ct) // beta = 2: no contraction
		pb.RateDir = finiteOr0(-slope(ns, lc))
		if s := pb.RateNorm + pb.RateDir; s > 0 {
			pb.ContractionShare = pb.RateNorm / s
		}
		switch {
		case !(pb.RateNorm+pb.RateDir > 0): // beta = 0: nothing forgets, so nothing carries it
			pb.Carrier = "none"
		case pb.ContractionShare >= 2.0/3:
			pb.Carrier = "contraction"
		case pb.ContractionShare <= 1.0/3:
			pb.Carrier = "decorrelation"
		default:
			pb.Carrier = "both"
		}
		pb.Criteria = cr.list
		if bi < nb {
			res.Pass = res.Pass && cr.pass()
			res.Betas = append(res.Betas, pb)
			continue
		}
		c := newControl(fmt.Sprintf("control beta = %g", beta), "steps so weak that the direction cannot mix within the longest route", critPathDir, cr.list)
		res.Controls = append(res.Controls, c)
		res.Control = &pb
		res.Pass = res.Pass && c.AsItMust
	}
	for _, b := range res.Betas {
		for _, c := range b.Criteria {
			res.Criteria = append(res.Criteria, Criterion{Name: fmt.Sprintf("beta=%g: %s", b.Beta, c.Name), Kind: c.Kind, Shows: c.Shows, Pass: c.Pass, Detail: c.Detail})
		}
	}
	return res
}

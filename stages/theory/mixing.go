package theory

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Check 1: the mixing window. For each step family, sequences of L tokens
// are simulated with the transport accumulated from the first token; queries
// are placed throughout each context, every query carries its own random
// unit content u, and the source at distance n carries the same content, so
// the correlation u^T P_{i-n->i} u / |u|^2 is 1 at n = 0 and measures how
// much of a perfect match survives a route of length n. Queries are spaced
// MaxRoute+1 apart so that their routes share no step: the samples are
// independent and plain standard errors apply.

// MixingResult is check 1's outcome.
type MixingResult struct {
	Pass        bool           `json:"pass"`
	Queries     int            `json:"queries_per_context"`
	MaxRoute    int            `json:"max_route"`
	Threshold   float64        `json:"threshold"`
	StepSamples int            `json:"step_samples"`
	Z           float64        `json:"z"` // simultaneous band for the curves
	Families    []MixingFamily `json:"families"`
	OpNormGrid  []int          `json:"op_norm_grid"`
	Criteria    []Criterion    `json:"criteria"`
	Contexts    []int          `json:"contexts"` // context lengths L
	// ZEmp is the band of the empirical criteria: alpha split over the
	// check's EmpiricalTests comparisons (one per criterion, family and,
	// for the window, context; never per route length).
	ZEmp           float64        `json:"z_empirical"`
	EmpiricalTests int            `json:"empirical_tests"`
	FarFrom        int            `json:"far_from"` // the second moment is averaged over n = FarFrom..MaxRoute
	Controls       []Control      `json:"controls"`
	ControlRuns    []MixingFamily `json:"control_runs"` // the controls' measurements, as for a family
}

// MixingFamily is one step family's measurements.
type MixingFamily struct {
	Family StepFamily `json:"family"`
	Pass   bool       `json:"pass"`
	// Rho is ||E[M]||_op: exact when RhoExact, else estimated as tr(E^[M])/d
	// (E[M] is a multiple of I for a conjugation-invariant law) with RhoSE.
	Rho      float64 `json:"rho"`
	RhoSE    float64 `json:"rho_se"`
	RhoExact bool    `json:"rho_exact"`
	// PhiArg is the rotation angle of E[M] per step (SO(2) drift); the exact
	// mean correlation is Re(phi^n) with phi = Rho e^{i PhiArg}.
	PhiArg float64 `json:"phi_arg"`
	// StepOpNorm is ||mean of StepSamples steps||_op, StepNoise its
	// split-half noise scale.
	StepOpNorm     float64         `json:"step_op_norm"`
	StepNoise      float64         `json:"step_noise"`
	Predicted      int             `json:"predicted_window"`
	PredictedRange [2]int          `json:"predicted_window_range"`
	Contexts       []MixingContext `json:"contexts"`
	OpNorm         []OpNormPoint   `json:"op_norm"`
	// Limit2 is E[(u^T P u)^2] under the law's limit (1/d Haar O(d),
	// 2/(d+2) uniform torus of block SO(2)); Far2 the measured value on far
	// routes, pooled over contexts.
	Limit2          float64     `json:"limit_second_moment"`
	Far2            float64     `json:"far_second_moment"`
	Far2SE          float64     `json:"far_second_moment_se"`
	Criteria        []Criterion `json:"criteria"`
	predictedExists bool
}

// MixingContext is the correlation curve measured in contexts of L tokens.
type MixingContext struct {
	L         int       `json:"L"`
	Sequences int       `json:"sequences"`
	Queries   int       `json:"queries"`
	Found     bool      `json:"window_found"` // false: |corr| >= threshold up to MaxRoute
	Window    int       `json:"window"`       // n*: 1 + last n with |mean corr| >= threshold
	WindowLo  int       `json:"window_lo"`    // from the lower simultaneous band
	WindowHi  int       `json:"window_hi"`    // from the upper simultaneous band
	Corr      []float64 `json:"corr"`         // mean correlation at n = 0..MaxRoute
	CorrSE    []float64 `json:"corr_se"`
	// Tau is the integrated correlation sum_{n=0}^{MaxRoute} corr(n), a
	// window length in tokens, measured per query.
	Tau   float64 `json:"tau"`
	TauSE float64 `json:"tau_se"`
}

// OpNormPoint compares ||E^[P_n]||_op with ||E[M]||^n.
type OpNormPoint struct {
	N         int     `json:"n"`
	Measured  float64 `json:"measured"`
	Noise     float64 `json:"noise"` // split-half estimate of ||E^ - E||_op
	Predicted float64 `json:"predicted"`
}

type mixSeq struct {
	seed     uint64
	off      int // first query at MaxRoute + off
	queries  int
	baseQIdx int // global index of the first query, for the A/B split
}

type mixAcc struct {
	// chars: SO(2) only, per block b and frequency k = 1..charMax, the
	// moments of cos(k S_b) and sin(k S_b) of the longest routes' angles
	// S_b, at index (b*charMax + k-1)*2 (+1 for sin).
	chars  []moments
	corr   []moments
	tau    moments // per query: sum_n corr(n)
	far2   moments // per query: mean of corr(n)^2 over n = farFrom..nmax
	pA, pB []float64
	nA, nB int
}

type mixPlan struct {
	// claim supplies E[M] = phi (times I, or a block rotation) for the
	// verdicts; tests replace it with a wrong claim to show the check fails.
	claim func(s stepper) (phi complex128, known bool)
	cfg   Config
	fams  []StepFamily // the config's families, then the controls'
	ctrl  []mixControl // the controls, in order after the config's families
	jobs  []job
	grid  []int
	gap   []*gapAcc     // per family
	accs  [][][]*mixAcc // family, context, chunk
	seqs  [][][]mixSeq  // family, context, sequences
}

type gapAcc struct {
	tr     moments
	sA, sB []float64
	nA, nB int
}

func opNormGrid(nmax int) []int {
	var g []int
	for _, n := range []int{0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512} {
		if n <= nmax {
			g = append(g, n)
		}
	}
	if g[len(g)-1] != nmax {
		g = append(g, nmax)
	}
	return g
}

func planMixing(cfg Config) *mixPlan {
	return planMixingWith(cfg, mixingControls(cfg.Mixing))
}

// planMixingWith plans the families and the given controls (tests replace a
// control by a law that passes, to show the check then fails).
func planMixingWith(cfg Config, ctrl []mixControl) *mixPlan {
	mc := cfg.Mixing
	p := &mixPlan{cfg: cfg, grid: opNormGrid(mc.MaxRoute), claim: stepper.meanStep, ctrl: ctrl}
	p.fams = append(p.fams, mc.Families...)
	for _, c := range p.ctrl {
		p.fams = append(p.fams, c.fam)
	}
	spacing := mc.MaxRoute + 1
	nf, nl := len(p.fams), len(mc.Contexts)
	p.gap = make([]*gapAcc, nf)
	p.accs = make([][][]*mixAcc, nf)
	p.seqs = make([][][]mixSeq, nf)
	for fi, fam := range p.fams {
		fi, fam := fi, fam
		p.gap[fi] = &gapAcc{}
		p.jobs = append(p.jobs, job{
			note: fmt.Sprintf("mixing %s: E[M] from %d steps", fam.Name, mc.StepSamples),
			run: func(ctx context.Context) error {
				return runGap(ctx, newStepper(fam), mc.StepSamples, p.gap[fi], newRNG(cfg.Seed, streamMixing, uint64(fi), 0xE0))
			},
		})
		p.accs[fi] = make([][]*mixAcc, nl)
		p.seqs[fi] = make([][]mixSeq, nl)
		for li, L := range mc.Contexts {
			// Plan the sequences: each has a random first-query offset, and
			// enough sequences are drawn to hold exactly Queries queries.
			plan := newRNG(cfg.Seed, streamMixing, uint64(fi), uint64(L), 0x91A)
			var seqs []mixSeq
			queries := mc.Queries
			if fi >= len(mc.Families) {
				queries = controlQueries(mc.Queries)
			}
			for total := 0; total < queries; {
				off := plan.IntN(spacing)
				q := 0
				if mc.MaxRoute+off <= L {
					q = (L-mc.MaxRoute-off)/spacing + 1
				}
				q = min(q, queries-total)
				if q == 0 {
					continue
				}
				seqs = append(seqs, mixSeq{seed: plan.Uint64(), off: off, queries: q, baseQIdx: total})
				total += q
			}
			p.seqs[fi][li] = seqs
			parts := splitCounts(len(seqs), mc.Chunks)
			start := 0
			for ci, cnt := range parts {
				acc := &mixAcc{}
				p.accs[fi][li] = append(p.accs[fi][li], acc)
				chunk := seqs[start : start+cnt]
				start += cnt
				L := L
				p.jobs = append(p.jobs, job{
					note: fmt.Sprintf("mixing %s: L=%d chunk %d/%d (%d sequences)", fam.Name, L, ci+1, len(parts), len(chunk)),
					run: func(ctx context.Context) error {
						return runMixChunk(ctx, fam, L, mc.MaxRoute, p.grid, chunk, acc)
					},
				})
			}
		}
	}
	return p
}

// runGap draws single steps to measure E[M]: tr(M)/d for the scalar c of
// conjugation-invariant laws, and the whole mean matrix for ||E^[M]||_op.
func runGap(ctx context.Context, s stepper, n int, acc *gapAcc, rng *rand.Rand) error {
	d := s.dim()
	acc.sA = make([]float64, d*d)
	acc.sB = make([]float64, d*d)
	m := make([]float64, d*d)
	for k := 0; k < n; k++ {
		if k%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		s.sampleStep(rng, m)
		var tr float64
		for i := 0; i < d; i++ {
			tr += m[i*d+i]
		}
		acc.tr.add(tr / float64(d))
		half := acc.sA
		if k%2 == 0 {
			acc.nA++
		} else {
			half = acc.sB
			acc.nB++
		}
		for i, v := range m {
			half[i] += v
		}
	}
	return nil
}

// runMixChunk simulates whole sequences: the transport is accumulated from
// token 1, so a query deep in a 64K context uses 64K accumulated steps.
func runMixChunk(ctx context.Context, fam StepFamily, L, nmax int, grid []int, seqs []mixSeq, acc *mixAcc) error {
	s := newStepper(fam)
	d, sl := s.dim(), s.stateLen()
	acc.corr = make([]moments, nmax+1)
	farFrom := farRouteStart(nmax)
	acc.pA = make([]float64, len(grid)*d*d)
	acc.pB = make([]float64, len(grid)*d*d)
	ring := make([]float64, (nmax+1)*sl)
	state := make([]float64, sl)
	u := make([]float64, d)
	ai := make([]float64, d)
	aj := make([]float64, d)
	pm := make([]float64, d*d)
	slot := func(t int) []float64 { k := t % (nmax + 1); return ring[k*sl : (k+1)*sl] }
	_, so2 := s.(*so2Stepper)
	if so2 {
		acc.chars = make([]moments, sl*charMax*2)
	}
	for _, sq := range seqs {
		if err := ctx.Err(); err != nil {
			return err
		}
		rng := newRNG(sq.seed)
		s.reset(state)
		copy(slot(0), state)
		next := nmax + sq.off
		done := 0
		for t := 1; done < sq.queries; t++ {
			if t > L {
				return fmt.Errorf("mixing %s: query plan overruns context L=%d (internal error)", fam.Name, L)
			}
			s.advance(rng, state)
			copy(slot(t), state)
			if t != next {
				continue
			}
			randomUnit(rng, u)
			s.transposeApply(slot(t), u, ai)
			var tau, far2 float64
			for n := 0; n <= nmax; n++ {
				s.transposeApply(slot(t-n), u, aj)
				x := dot(ai, aj)
				acc.corr[n].add(x)
				tau += x
				if n >= farFrom {
					far2 += x * x
				}
			}
			acc.tau.add(tau)
			acc.far2.add(far2 / float64(nmax-farFrom+1))
			if so2 { // the state is the blocks' accumulated angles
				for b, ang := range slot(t) {
					S := ang - slot(t - nmax)[b]
					for k := 1; k <= charMax; k++ {
						sn, c := math.Sincos(float64(k) * S)
						i := (b*charMax + k - 1) * 2
						acc.chars[i].add(c)
						acc.chars[i+1].add(sn)
					}
				}
			}
			half := acc.pA
			if (sq.baseQIdx+done)%2 == 0 {
				acc.nA++
			} else {
				half = acc.pB
				acc.nB++
			}
			for gi, n := range grid {
				s.relative(slot(t), slot(t-n), pm)
				h := half[gi*d*d : (gi+1)*d*d]
				for k, v := range pm {
					h[k] += v
				}
			}
			done++
			next += nmax + 1
		}
	}
	return nil
}

func dot(a, b []float64) float64 {
	var s float64
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// meanAndNoise returns ||(A+B)/(nA+nB)||_op and the split-half noise scale
// ||A/nA - B/nB||_op / 2, which has (to first order) the distribution of the
// estimation error ||E^ - E||_op itself.
func meanAndNoise(d int, a, b []float64, nA, nB int) (norm, noise float64) {
	if nA == 0 || nB == 0 {
		return math.NaN(), math.NaN()
	}
	m := make([]float64, d*d)
	diff := make([]float64, d*d)
	for i := range m {
		m[i] = (a[i] + b[i]) / float64(nA+nB)
		diff[i] = a[i]/float64(nA) - b[i]/float64(nB)
	}
	return opNorm(mat.NewDense(d, d, m)), opNorm(mat.NewDense(d, d, diff)) / 2
}

// opNoiseFactor multiplies the split-half noise scale in the ||E[P_n]||
// tolerance: the error and its estimate are identically distributed op norms
// of d x d noise, which concentrate, so a ratio above 4 does not happen in
// practice at d >= 8.
const opNoiseFactor = 4

// farRouteStart is where far routes begin for the second-moment criterion:
// the last quarter of the measured routes, past every window the config's
// families have, so the law's transient is far below the Monte Carlo error.
func farRouteStart(nmax int) int { return nmax - nmax/4 }

// limitSecondMoment is E[(u^T P u)^2] for a uniform unit u and P from the
// limit law: 2/(d+2) for the uniform torus of block SO(2) (sum_b w_b cos S_b
// with w ~ Dirichlet(1,..,1)), 1/d for Haar O(d) (and SO(d), d >= 3: the
// second moments agree), 1 for the identity.
func limitSecondMoment(f StepFamily) float64 {
	switch f.Kind {
	case "so2":
		return 2 / float64(f.Dim+2)
	case "identity":
		return 1
	}
	return 1 / float64(f.Dim)
}

// charMax is the highest frequency k of the characters E[cos k S],
// E[sin k S] the every-frequency criterion tests (docs/statistics.md,
// issue 52: at least 8, so that a law on the multiples of pi/2 fails at
// k = 4 and one on the multiples of pi/4 at k = 8).
const charMax = 8

// Names of check 1's empirical criteria (the controls name them too).
const (
	critChars   = "far-route angle uniform on the circle at every frequency (characters k = 1..8)"
	critLaw     = "far-route law converges to its limit (second moment)"
	critWindow  = "window n* found within max route"
	critNoGrowL = "mixing independent of L (integrated correlation)"
)

func (p *mixPlan) finish() *MixingResult {
	mc := p.cfg.Mixing
	nf, nl := len(mc.Families), len(mc.Contexts)
	// Empirical comparisons per family: the second moment, the L contrast
	// and the window in each context; the characters per SO(2) family
	// (one share of alpha, split over its characters inside).
	nEmp := nf * (2 + nl)
	for _, f := range mc.Families {
		if f.Kind == "so2" {
			nEmp++
		}
	}
	res := &MixingResult{
		Queries: mc.Queries, MaxRoute: mc.MaxRoute, Threshold: mc.Threshold, StepSamples: mc.StepSamples,
		OpNormGrid: p.grid, Contexts: mc.Contexts, FarFrom: farRouteStart(mc.MaxRoute),
		// Identity tests: every family, context and route length at once.
		Z:              bonferroniZ(p.cfg.Alpha, nf*nl*(mc.MaxRoute+1)),
		ZEmp:           bonferroniZ(p.cfg.Alpha, nEmp),
		EmpiricalTests: nEmp,
	}
	res.Pass = true
	for fi, fam := range p.fams {
		mf := p.family(fi, fam, res)
		if fi < nf {
			res.Pass = res.Pass && mf.Pass
			res.Families = append(res.Families, mf)
			continue
		}
		c := p.ctrl[fi-nf]
		for _, crit := range c.mustFail {
			ctl := newControl(c.fam.Name, c.law, crit, mf.Criteria)
			ctl.Detail += "; empirical criteria failed: " + failedEmpirical(mf.Criteria)
			res.Controls = append(res.Controls, ctl)
			res.Pass = res.Pass && ctl.AsItMust
		}
		res.ControlRuns = append(res.ControlRuns, mf)
	}
	// Check-level criteria: one line per family.
	for _, f := range res.Families {
		var failed []string
		for _, c := range f.Criteria {
			if !c.Pass {
				failed = append(failed, c.Name)
			}
		}
		d := fmt.Sprintf("rho=%.4f, predicted n*=%d", f.Rho, f.Predicted)
		if len(failed) > 0 {
			d += fmt.Sprintf("; failed: %v", failed)
		}
		res.Criteria = append(res.Criteria, Criterion{Name: "family " + f.Family.Name, Kind: Empirical, Pass: f.Pass, Detail: d})
	}
	return res
}

// family evaluates one family's (or control's) criteria.
func (p *mixPlan) family(fi int, fam StepFamily, res *MixingResult) MixingFamily {
	mc := p.cfg.Mixing
	nl := len(mc.Contexts)
	eps := mc.Threshold
	s := newStepper(fam)
	d := s.dim()
	g := p.gap[fi]
	mf := MixingFamily{Family: fam}
	phi, known := p.claim(s)
	if known {
		mf.RhoExact = true
	} else {
		phi = complex(g.tr.mean(), 0)
		mf.RhoSE = g.tr.se()
	}
	mf.Rho, mf.PhiArg = cmplx.Abs(phi), cmplx.Phase(phi)
	mf.StepOpNorm, mf.StepNoise = meanAndNoise(d, g.sA, g.sB, g.nA, g.nB)
	rho, rhoSE, z, zE := mf.Rho, mf.RhoSE, res.Z, res.ZEmp
	// exact mean correlation and its uncertainty from an estimated rho.
	exact := func(n int) (float64, float64) {
		v := real(cmplx.Pow(phi, complex(float64(n), 0)))
		if n == 0 {
			v = 1
		}
		return v, float64(n) * math.Pow(rho, float64(max(n-1, 0))) * rhoSE
	}
	var cr criteria
	cr.empirical(critLaw, "E[(u^T P_n u)^2] on far routes equals the limit's (2/(d+2) torus, 1/d Haar): the products mix as a law, not only in mean")
	cr.empirical(critWindow, "the simulated mean correlation falls below epsilon within the longest route in every context")
	// For i.i.d. steps a route's law depends on its length alone, never on
	// where it starts, so L-independence holds for any i.i.d. law: an
	// identity (it tests the simulation). Only a position-dependent law (the
	// shrinking-spread control; Validate refuses one as a family) makes it a
	// criterion that can fail.
	if fam.Shrink != 0 {
		cr.empirical(critNoGrowL, "sum_n corr(n) is the same in the shortest and the longest context: the window does not grow with position")
	}
	if fam.Kind == "so2" {
		cr.empirical(critChars, "each block's accumulated angle on the longest routes has every character E[cos k S], E[sin k S] (k = 1..8) zero, as the uniform law on the circle does: the second moment sees only the lowest modes, and a law on {0, pi/2, pi, 3pi/2} passes it")
		p.charCriterion(&cr, fi, res)
	}

	// Empirical 1: the law itself converges, not only its mean.
	var far2 moments
	for li := 0; li < nl; li++ {
		for _, acc := range p.accs[fi][li] {
			far2.merge(acc.far2)
		}
	}
	mf.Limit2, mf.Far2, mf.Far2SE = limitSecondMoment(fam), far2.mean(), far2.se()
	d2 := math.Abs(mf.Far2 - mf.Limit2)
	cr.check(critLaw, d2 <= zE*mf.Far2SE+1e-12,
		"E[x^2] over n=%d..%d = %.5f +- %.5f vs limit %.5f: |diff| = %.1f SE (tolerance %.2f SE)", res.FarFrom, mc.MaxRoute, mf.Far2, mf.Far2SE, mf.Limit2, d2/math.Max(mf.Far2SE, 1e-300), zE)

	cr.check("spectral gap ||E[M]||_op < 1", rho+z*rhoSE < 1,
		"rho = %.5f +- %.5f (z=%.2f)", rho, rhoSE, z)
	diffM := math.Abs(mf.StepOpNorm - rho)
	cr.check("measured ||E[M]||_op matches rho", diffM <= opNoiseFactor*mf.StepNoise+z*rhoSE+1e-9,
		"||E^[M]||_op = %.5f vs rho = %.5f: |diff| %.2g, tolerance %.2g (%d steps)", mf.StepOpNorm, rho, diffM, opNoiseFactor*mf.StepNoise+z*rhoSE, mc.StepSamples)
	pw, ok := predictedWindow(rho, eps)
	mf.Predicted, mf.predictedExists = pw, ok
	lo, _ := predictedWindow(math.Max(rho-z*rhoSE, 0), eps)
	hi, okHi := predictedWindow(rho+z*rhoSE, eps)
	if !okHi {
		hi = math.MaxInt32
	}
	mf.PredictedRange = [2]int{lo, hi}

	// ||E[P_n]||_op = rho^n, pooled over all contexts.
	worst := 0.0
	for gi, n := range p.grid {
		a := make([]float64, d*d)
		b := make([]float64, d*d)
		var nA, nB int
		for li := 0; li < nl; li++ {
			for _, acc := range p.accs[fi][li] {
				for k := range a {
					a[k] += acc.pA[gi*d*d+k]
					b[k] += acc.pB[gi*d*d+k]
				}
				nA += acc.nA
				nB += acc.nB
			}
		}
		meas, noise := meanAndNoise(d, a, b, nA, nB)
		pred := math.Pow(rho, float64(n))
		_, predSE := exact(n)
		tol := opNoiseFactor*noise + z*predSE + 1e-9
		mf.OpNorm = append(mf.OpNorm, OpNormPoint{N: n, Measured: meas, Noise: noise, Predicted: pred})
		diff := math.Abs(meas - pred)
		worst = math.Max(worst, diff/tol)
		cr.check("||E[P_n]||_op = ||E[M]||^n", diff <= tol,
			"n=%d: measured %.4f vs rho^n %.4f, |diff| %.2g > tolerance %.2g", n, meas, pred, diff, tol)
	}
	cr.summary("||E[P_n]||_op = ||E[M]||^n", "all %d route lengths within tolerance (worst |diff|/tol = %.2f; %d routes)", len(p.grid), worst, mc.Queries*nl)

	// Correlation curves per context.
	worstExact, worstBound := 0.0, math.Inf(-1)
	for li, L := range mc.Contexts {
		mcx := MixingContext{L: L, Sequences: len(p.seqs[fi][li])}
		sum := make([]moments, mc.MaxRoute+1)
		var tau moments
		for _, acc := range p.accs[fi][li] {
			for n := range sum {
				sum[n].merge(acc.corr[n])
			}
			tau.merge(acc.tau)
		}
		mcx.Tau, mcx.TauSE = tau.mean(), tau.se()
		mcx.Queries = int(sum[0].n)
		lastMean, lastLo, lastHi := -1, -1, -1
		for n := range sum {
			m, se := sum[n].mean(), sum[n].se()
			mcx.Corr = append(mcx.Corr, m)
			mcx.CorrSE = append(mcx.CorrSE, se)
			ex, exSE := exact(n)
			tol := z*math.Hypot(se, exSE) + 1e-9
			diff := math.Abs(m - ex)
			worstExact = math.Max(worstExact, diff/tol)
			cr.check("mean corr = Re(phi^n) (exact for i.i.d. steps)", diff <= tol,
				"L=%d n=%d: corr %.4f +- %.4f vs exact %.4f", L, n, m, se, ex)
			excess := math.Abs(m) - z*se - math.Pow(rho, float64(n))
			if n > 0 { // n = 0 is 1 <= 1 trivially
				worstBound = math.Max(worstBound, excess)
			}
			cr.check("|mean corr| <= rho^n (spectral-gap bound)", excess <= z*exSE+1e-9,
				"L=%d n=%d: |corr| %.4f +- %.4f above rho^n %.4f", L, n, math.Abs(m), se, math.Pow(rho, float64(n)))
			if math.Abs(m) >= eps {
				lastMean = n
			}
			if math.Abs(m)-zE*se >= eps {
				lastLo = n
			}
			if math.Abs(m)+zE*se >= eps {
				lastHi = n
			}
		}
		mcx.Window, mcx.WindowLo, mcx.WindowHi = lastMean+1, lastLo+1, lastHi+1
		mcx.Found = lastHi < mc.MaxRoute
		cr.check(critWindow, mcx.Found,
			"L=%d: |corr| + band still >= %.3g at n = %d (max route; |corr| there %.4f): no mixing window", L, eps, mc.MaxRoute, math.Abs(mcx.Corr[mc.MaxRoute]))
		if ok && mcx.Found {
			cr.check("window matches gap prediction", mcx.WindowLo <= hi,
				"L=%d: measured n* in [%d, %d] but the gap bound predicts n* <= %d", L, mcx.WindowLo, mcx.WindowHi, hi)
			if imag(phi) == 0 { // the bound is attained: prediction is two-sided
				cr.check("window matches gap prediction", mcx.WindowHi >= lo,
					"L=%d: measured n* in [%d, %d] but rho^n predicts n* = %d (range %d..%d)", L, mcx.WindowLo, mcx.WindowHi, pw, lo, hi)
			}
		} else if !ok {
			cr.check("window matches gap prediction", false, "no spectral gap (rho = %.4f): the gap predicts no window", rho)
		}
		mf.Contexts = append(mf.Contexts, mcx)
	}
	cr.summary("|mean corr| <= rho^n (spectral-gap bound)", "max over contexts and n >= 1 of |corr| - z SE - rho^n = %.3g (<= 0 passes)", worstBound)
	cr.summary("mean corr = Re(phi^n) (exact for i.i.d. steps)", "all %d contexts x %d route lengths agree (worst |diff|/tol = %.2f)", nl, mc.MaxRoute+1, worstExact)

	// Empirical 3: the window does not grow with L. One comparison: the
	// integrated correlation of the shortest against the longest context
	// (queries there sit deepest in the sequence).
	ca, cb := mf.Contexts[0], mf.Contexts[nl-1]
	se := math.Hypot(ca.TauSE, cb.TauSE)
	dt := math.Abs(ca.Tau - cb.Tau)
	cr.check(critNoGrowL, nl < 2 || dt <= zE*se+1e-9,
		"sum_n corr(n) = %.3f +- %.3f at L=%d vs %.3f +- %.3f at L=%d: |diff| = %.1f SE (tolerance %.2f SE)", ca.Tau, ca.TauSE, ca.L, cb.Tau, cb.TauSE, cb.L, dt/math.Max(se, 1e-300), zE)
	var ws []string
	for _, c := range mf.Contexts {
		ws = append(ws, fmt.Sprintf("L=%d: n*=%d [%d,%d]", c.L, c.Window, c.WindowLo, c.WindowHi))
	}
	cr.summary(critWindow, "the upper band (z = %.2f) falls below %.3g before n = %d in every context: %v", zE, eps, mc.MaxRoute, ws)
	if ok {
		cr.summary("window matches gap prediction", "predicted n* = %d (range %d..%d), measured %v", pw, lo, hi, ws)
	}
	mf.Criteria = cr.list
	mf.Pass = cr.pass()
	return mf
}

// charCriterion is the every-frequency law criterion of an SO(2) family:
// per block and k = 1..charMax, the characters' means over the longest
// routes (independent queries) against 0, each a z with its own standard
// error, Bonferroni over the 2 charMax m characters inside the
// criterion's share of alpha. A character with no spread (a deterministic
// angle) fails when its mean is not 0.
func (p *mixPlan) charCriterion(cr *criteria, fi int, res *MixingResult) {
	var chars []moments
	for _, accs := range p.accs[fi] {
		for _, acc := range accs {
			if chars == nil {
				chars = make([]moments, len(acc.chars))
			}
			for i := range acc.chars {
				chars[i].merge(acc.chars[i])
			}
		}
	}
	z := bonferroniZ(p.cfg.Alpha, res.EmpiricalTests*max(len(chars), 1))
	worst, at := 0.0, ""
	for i, c := range chars {
		m, se := c.mean(), c.se()
		r := math.Abs(m) / se
		if se == 0 {
			r = 0
			if math.Abs(m) > 1e-9 {
				r = math.Inf(1)
			}
		}
		part := "cos"
		if i%2 == 1 {
			part = "sin"
		}
		if r > worst || at == "" {
			worst, at = r, fmt.Sprintf("block %d, E[%s %d S] = %.4f +- %.4f", i/2/charMax, part, i/2%charMax+1, m, se)
		}
		cr.check(critChars, r <= z,
			"block %d: E[%s %d S] = %.4f +- %.4f over %d routes of %d steps: %.1f SE from 0 (tolerance %.2f SE)", i/2/charMax, part, i/2%charMax+1, m, se, int(c.n), res.MaxRoute, r, z)
	}
	cr.summary(critChars, "all %d characters within %.2f SE of 0 (worst: %s, %.1f SE)", len(chars), z, at, worst)
}

package nativeeval

import (
	"context"
	"fmt"
	"math"
	"routebench/model/native"

	"routebench/modelspec"
	"routebench/modelspec/ropescale"
)

// Options controls one LogProbs call.
type Options struct {
	// FarDistances, when non-empty, turns on the attention diagnostics: for
	// every layer and head, the distribution over queries of the attention
	// mass on sources farther than each distance, and of the entropy. It
	// doubles the attention cost.
	FarDistances []int
	// Workers is the number of goroutines; 0 or less means GOMAXPROCS.
	Workers int
	// ReturnLogits also returns the L x V logits: for small L only
	// (cross-checks); refused above maxLogits values.
	ReturnLogits bool
	// PathSteps also returns, per layer and head, the sum over the
	// window's positions of the Householder steps' rank-one parts
	// beta_t w_t w_t^T (PaTH models only): E[H_t] = I - Sum / Count is the
	// mean step whose operator norm is the theory's spectral gap. Costs
	// L d^2 / 2 per head and layer, a small part of the attention's.
	PathSteps bool
	// Prefixes, increasing lengths below the window's, also summarise the
	// diagnostics (FarDistances, PathSteps) over each prefix's queries
	// [0, P) alone, into Result.PrefixHeads and PrefixPathSteps. A causal
	// model's query i sees the same sources in the window as in its
	// length-P prefix, so these are the prefix windows' own diagnostics,
	// without a forward pass of each.
	Prefixes []int
	// RopeScaling evaluates a rope model extended at inference (PI, NTK,
	// YaRN; ropescale.Scaling): its frequencies, and YaRN's query and
	// key scale folded into the rotation table. The zero value, or s = 1,
	// is plain RoPE bit for bit. Rope models only.
	RopeScaling ropescale.Scaling
	// ProbeQueries, increasing positions, turn on the mechanism probe
	// (probe.go): each layer's and head's exact attention row of each
	// listed query, by log2-distance bin, with the far mass, coherence
	// and bound beyond ProbeFar (sources j with i - j > ProbeFar), in
	// Result.Probe. Costs O(L d) per query, layer and head.
	ProbeQueries []int
	ProbeFar     int
	// RouteTrace also returns every layer's transport steps in Result.Route
	// (routetrace.go): accumulated and PaTH variants; nothing for others.
	RouteTrace bool
}

// rowBlock is the number of positions the projection, MLP and output
// stages handle per task (a multiple of the 6-row kernels).
const rowBlock = 48

// maxLogits bounds ReturnLogits (1 GiB of float32).
const maxLogits = 1 << 28

// Result is the output of LogProbs.
type Result struct {
	// LogProbs[i] = log p(targets[i] | tokens[0..i]) in nats; nil when
	// targets is nil.
	LogProbs []float64
	// Logits[i] is the output row of position i, only with ReturnLogits.
	Logits [][]float32
	// Heads holds diagnostics layer-major (layer 0 heads 0..H-1, layer 1,
	// ...), only with FarDistances.
	Heads []HeadStats
	// PathSteps holds the step sums layer-major, only with Options.PathSteps.
	PathSteps []PathStepSum
	// PrefixHeads[k] and PrefixPathSteps[k] are Heads and PathSteps over
	// the first Options.Prefixes[k] positions.
	PrefixHeads     [][]HeadStats
	PrefixPathSteps [][]PathStepSum
	// Probe holds the probe rows layer-major, then query, then head,
	// only with Options.ProbeQueries.
	Probe []ProbeRow
	// Route holds each layer's transport steps, only with Options.RouteTrace.
	Route []LayerRoute
}

// rowScratch is one worker's memory for the row-block stages.
type rowScratch struct {
	a, qkv, hid, logits []float32
	pr                  []float32 // PaTH: the rank-R projection of a row block
}

// LogProbs runs the forward pass on one window of tokens and scores
// targets (same length as tokens, or nil). ctx is checked between stages.
func (m *Model) LogProbs(ctx context.Context, tokens, targets []int32, opts Options) (Result, error) {
	a := m.Arch
	L, V, D, H, d, F := len(tokens), a.Vocab, a.DModel, a.Heads, a.DHead(), a.DHidden
	if err := m.checkInputs(tokens, targets, opts); err != nil {
		return Result{}, err
	}
	workers := opts.Workers
	var res Result

	h := make([]float32, L*D)
	for i, x := range tokens {
		copy(h[i*D:(i+1)*D], m.embed[int(x)*D:(int(x)+1)*D])
	}
	s := &attnShape{L: L, H: H, d: d, valueRot: a.ValueRot, slopes: m.slopes}
	switch a.Rotation {
	case modelspec.RotationRoPE:
		rs := opts.RopeScaling
		s.cs = ropeCosSin(L, H, rs.Frequencies(d, a.RopeBase), rs.QKScale(), workers)
	case modelspec.RotationAccumulated:
		if a.AngleProj {
			s.cs = make([]float32, L*H*d) // per layer, from the block input (below)
		} else {
			s.cs = accumulatedCosSin(tokens, m.angles, H, d, workers)
		}
	}
	var theta []float32 // learned-proj-qkv: one layer's per-position angles a W_ang [L][H*P]
	if a.AngleProj {
		theta = make([]float32, L*H*(d/2))
	}
	bufs := newHeadBufs(s)
	var pblocks *pathBlocks // PaTH's key blocks, reused layer to layer
	att := make([]float32, L*D)
	vp := (V + 15) &^ 15
	pool := newScratchPool(func(int) *rowScratch {
		sc := &rowScratch{a: make([]float32, rowBlock*D), qkv: make([]float32, rowBlock*3*D),
			hid: make([]float32, rowBlock*F), logits: make([]float32, rowBlock*vp)}
		for i := range sc.logits {
			sc.logits[i] = float32(math.Inf(-1)) // padding columns stay -Inf
		}
		return sc
	}, func(*rowScratch, int) bool { return true })
	nrb := (L + rowBlock - 1) / rowBlock
	eps := a.NormEps
	var pz, pbg []float32 // PaTH: a W_down W_up [L][D] and a (wbeta | wgate) [L][nbg]
	if a.Householder {
		pz, pbg = make([]float32, L*D), make([]float32, L*m.layers[0].path.nbg)
	}

	for n, ly := range m.layers {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("native: forward cancelled at layer %d: %w", n, err)
		}
		if ly.kerpleP != nil { // this layer's p_h, a_h: before the attention and the probe read it
			s.kerple = kerpleTables(s.kerple, ly.kerpleP, ly.kerpleA, L, workers)
		}
		if ly.angProj != nil {
			// The rotation of this layer needs every position's angle before
			// the first row is scattered: a first pass projects the normed
			// rows (the norm is recomputed below rather than kept, O(L d/2)
			// extra memory instead of O(L D)).
			HP := H * (d / 2)
			native.ParallelFor(nrb, workers, func(rb int) {
				sc := pool.get(0)
				defer pool.put(sc)
				r0, nr := rb*rowBlock, min(rowBlock, L-rb*rowBlock)
				rmsNormRows(sc.a, h[r0*D:], ly.norm1, nr, D, eps)
				native.GemmPacked(theta[r0*HP:], HP, sc.a, D, ly.angProj, nr, false)
			})
			projectedCosSin(s.cs, theta, L, H, d, workers)
		}
		native.ParallelFor(nrb, workers, func(rb int) {
			sc := pool.get(0)
			defer pool.put(sc)
			r0, nr := rb*rowBlock, min(rowBlock, L-rb*rowBlock)
			rmsNormRows(sc.a, h[r0*D:], ly.norm1, nr, D, eps)
			native.GemmPacked(sc.qkv, 3*D, sc.a, D, ly.wqkv, nr, false)
			bufs.scatterRows(s, r0, nr, sc.qkv, sc.qkv[D:], sc.qkv[2*D:], 3*D)
			if pl := ly.path; pl != nil {
				if sc.pr == nil {
					sc.pr = make([]float32, rowBlock*a.PathRank)
				}
				native.GemmPacked(sc.pr, a.PathRank, sc.a, D, pl.down, nr, false)
				native.GemmPacked(pz[r0*D:], D, sc.pr, a.PathRank, pl.up, nr, false)
				native.GemmPacked(pbg[r0*pl.nbg:], pl.nbg, sc.a, D, pl.wbg, nr, false)
			}
		})
		var diag *layerDiag
		if len(opts.FarDistances) > 0 {
			diag = newLayerDiag(H, L, opts.FarDistances)
		}
		var st *pathSteps
		if ly.path != nil {
			st = computePathSteps(ly.path, pz, pbg, L, H, d, workers)
			if opts.PathSteps {
				res.PathSteps = append(res.PathSteps, st.sums(n, L, L, H, d, workers)...)
				if n == 0 {
					res.PrefixPathSteps = make([][]PathStepSum, len(opts.Prefixes))
				}
				for k, P := range opts.Prefixes {
					res.PrefixPathSteps[k] = append(res.PrefixPathSteps[k], st.sums(n, L, P, H, d, workers)...)
				}
			}
			pblocks = newPathBlocks(s, bufs, st, workers, pblocks)
			pathAttend(s, bufs, st, pblocks, att, workers, diag)
		} else {
			bufs.attend(s, att, workers, diag)
		}
		m.traceRoute(&res, opts, n, tokens, theta, st) // routetrace.go
		if len(opts.ProbeQueries) > 0 {
			res.Probe = append(res.Probe, probeLayer(s, bufs, st, att, n, opts.ProbeQueries, opts.ProbeFar, workers)...)
		}
		if diag != nil {
			res.Heads = append(res.Heads, diag.summarize(n, L)...)
			if n == 0 {
				res.PrefixHeads = make([][]HeadStats, len(opts.Prefixes))
			}
			for k, P := range opts.Prefixes {
				res.PrefixHeads[k] = append(res.PrefixHeads[k], diag.summarize(n, P)...)
			}
		}
		native.ParallelFor(nrb, workers, func(rb int) {
			sc := pool.get(0)
			defer pool.put(sc)
			r0, nr := rb*rowBlock, min(rowBlock, L-rb*rowBlock)
			hr := h[r0*D:]
			native.GemmPacked(hr, D, att[r0*D:], D, ly.wo, nr, true) // h += attn wo
			rmsNormRows(sc.a, hr, ly.norm2, nr, D, eps)
			native.GemmPacked(sc.hid, F, sc.a, D, ly.w1, nr, false)
			for r := 0; r < nr; r++ {
				row := sc.hid[r*F : (r+1)*F]
				for c, b := range ly.b1 {
					row[c] += b
				}
				native.GELU(row)
			}
			native.GemmPacked(hr, D, sc.hid, F, ly.w2, nr, true) // h += gelu(...) w2
			for r := 0; r < nr; r++ {
				row := hr[r*D : (r+1)*D]
				for c, b := range ly.b2 {
					row[c] += b
				}
			}
		})
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("native: forward cancelled before the output layer: %w", err)
	}
	if targets != nil {
		res.LogProbs = make([]float64, L)
	}
	if opts.ReturnLogits {
		res.Logits = make([][]float32, L)
		flat := make([]float32, L*V)
		for i := range res.Logits {
			res.Logits[i] = flat[i*V : (i+1)*V : (i+1)*V]
		}
	}
	// Output layer rowBlock rows at a time: never an L x V array.
	native.ParallelFor(nrb, workers, func(rb int) {
		sc := pool.get(0)
		defer pool.put(sc)
		r0, nr := rb*rowBlock, min(rowBlock, L-rb*rowBlock)
		rmsNormRows(sc.a, h[r0*D:], m.normf, nr, D, eps)
		native.GemmPacked(sc.logits, vp, sc.a, D, m.unemb, nr, false)
		for r := 0; r < nr; r++ {
			row := sc.logits[r*vp : (r+1)*vp]
			if res.Logits != nil {
				copy(res.Logits[r0+r], row[:V])
			}
			if targets == nil {
				continue
			}
			mx := native.MaxOf(row)
			t := row[targets[r0+r]]
			sum := native.ExpShift(row, mx) // destroys the row; the padding stays 0 -> reset below
			res.LogProbs[r0+r] = float64(t-mx) - math.Log(float64(sum))
			for c := V; c < vp; c++ {
				row[c] = float32(math.Inf(-1))
			}
		}
	})
	return res, nil
}

func (m *Model) checkInputs(tokens, targets []int32, opts Options) error {
	a := m.Arch
	if len(tokens) == 0 {
		return fmt.Errorf("native: empty token window (pass at least one token)")
	}
	if targets != nil && len(targets) != len(tokens) {
		return fmt.Errorf("native: %d targets for %d tokens (want one target per position, or nil)", len(targets), len(tokens))
	}
	for name, xs := range map[string][]int32{"token": tokens, "target": targets} {
		for i, x := range xs {
			if x < 0 || int(x) >= a.Vocab {
				return fmt.Errorf("native: %s %d at position %d is outside the vocabulary [0, %d) of %s/%s weights", name, x, i, a.Vocab, a.Variant, a.Profile)
			}
		}
	}
	for k, P := range opts.Prefixes {
		if P <= 0 || P >= len(tokens) || (k > 0 && P <= opts.Prefixes[k-1]) {
			return fmt.Errorf("native: prefixes %v for a window of %d: want increasing lengths in (0, %d)", opts.Prefixes, len(tokens), len(tokens))
		}
	}
	if err := checkProbe(opts.ProbeQueries, opts.ProbeFar, len(tokens)); err != nil {
		return err
	}
	if err := opts.RopeScaling.Validate(); err != nil {
		return fmt.Errorf("native: %w", err)
	}
	if opts.RopeScaling.Method != "" && a.Rotation != modelspec.RotationRoPE {
		return fmt.Errorf("native: rope scaling %s on %s/%s weights, whose rotation is %q: extensions apply to rope models only", opts.RopeScaling.Method, a.Variant, a.Profile, a.Rotation)
	}
	for _, D := range opts.FarDistances {
		if D < 0 {
			return fmt.Errorf("native: far distance %d is negative (want distances >= 0, e.g. T and T/4)", D)
		}
	}
	if opts.PathSteps && !a.Householder {
		return fmt.Errorf("native: PathSteps asked of %s/%s weights, which have no Householder steps; ask it only of PaTH variants (path, path-fox)", a.Variant, a.Profile)
	}
	if opts.ReturnLogits && len(tokens)*a.Vocab > maxLogits {
		return fmt.Errorf("native: ReturnLogits for %d tokens x %d vocabulary exceeds %d values; use LogProbs alone for long windows", len(tokens), a.Vocab, maxLogits)
	}
	return nil
}

// rmsNormRows writes RMSNorm(x_r) * g for n rows of width D (mean of squares in float64).
func rmsNormRows(dst, x, g []float32, n, D int, eps float64) {
	for r := 0; r < n; r++ {
		row := x[r*D : (r+1)*D]
		var ss float64
		for _, u := range row {
			ss += float64(u) * float64(u)
		}
		inv := float32(1 / math.Sqrt(ss/float64(D)+eps))
		out := dst[r*D : (r+1)*D]
		for c, u := range row {
			out[c] = u * inv * g[c]
		}
	}
}

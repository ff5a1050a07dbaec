package nativeeval

import (
	"math"

	"routebench/model/native"
	"routebench/modelspec"
)

// PaTH attention, streaming (the math: modelspec/householder.go). Each query is
// carried backwards through the Householder steps as the key blocks are
// visited newest to oldest, so memory stays O(L d):
//
//	logit_ij = q_i^T H_i ... H_{j+1} k_j = u_i^T k~_j,
//	u_i^T    = q_i^T H_i ... H_{c1}        (c1 the end of j's key block),
//	k~_j     = H_{c1-1} ... H_{j+1} k_j    (k_j carried to its block's end).
//
// A key block's whole product is kept in WY form, Pi = H_{c1-1} ... H_{c0} =
// I - W^T Z (newPathBlocks), and as that d x d matrix, so leaving the block
// is u^T <- u^T Pi: one d x d product per query (PVBlock), a quarter of
// the two 64-wide products of the WY form at d = 32. The query's own block
// uses the WY form: its scores are
// Q K^T - tril(Q W^T) M and its queries leave it as Q - tril(Q W^T) Z, all
// products of 64-row blocks. Query blocks are key blocks (64 rows), so the
// two tilings align, and each key block's form is built once per layer and
// reused by every later query block.
//
// Cost per (query, key) pair below the diagonal block: the score (2d) and
// the value (2d) as in plain attention, plus the transport (2d^2 / 64:
// d at d = 32). Building a block's forms costs about 12 * 64^2 d flops
// more (pathFLOPs).

// pathBroken names a piece that tests break on purpose ("gate", "conv",
// "order", "solve": pathSolve without the rows already solved) to prove that the reference comparisons can fail; empty in every
// real run.
var pathBroken string

// pathLayer is one block's PaTH weights.
type pathLayer struct {
	down, up *native.PackedB // D x R, R x D
	conv     []float32       // [K][D]
	wbg      *native.PackedB // D x H (wbeta), or D x 2H (wbeta | wgate) with the gate
	bbeta    []float32       // [H]
	bgate    []float32       // [H], nil without the gate
	K, nbg   int             // taps, columns of wbg
}

// pathSteps holds one layer's steps for the whole window.
type pathSteps struct {
	w    []float32 // [H][L][d] unit directions
	beta []float32 // [H][L]
	G    []float64 // [H][L] gate prefix sums; nil without the gate
}

// computePathSteps forms the steps from the block input projections: z
// ([L][D], a W_down W_up) and bg ([L][nbg], a wbeta | a wgate before biases).
func computePathSteps(pl *pathLayer, z, bg []float32, L, H, d, workers int) *pathSteps {
	D := H * d
	st := &pathSteps{w: make([]float32, H*L*d), beta: make([]float32, H*L)}
	native.ParallelFor((L+255)/256, workers, func(b int) {
		y := make([]float32, D)
		for t := b * 256; t < min(L, (b+1)*256); t++ {
			for c := range y {
				var acc float32
				for k := 0; k < pl.K && k <= t; k++ {
					if pathBroken == "conv" && k > 0 {
						break
					}
					tap := pl.conv[k*D+c]
					if pathBroken == "conv" {
						tap = 1
					}
					acc += tap * z[(t-k)*D+c]
				}
				y[c] = acc / (1 + float32(math.Exp(float64(-acc)))) // SiLU
			}
			for h := 0; h < H; h++ {
				var n2 float64
				for _, x := range y[h*d : h*d+d] {
					n2 += float64(x) * float64(x)
				}
				inv := float32(1 / math.Sqrt(n2+modelspec.PathNormEps))
				dst := st.w[(h*L+t)*d : (h*L+t)*d+d]
				for c := range dst {
					dst[c] = y[h*d+c] * inv
				}
				x := float64(bg[t*pl.nbg+h] + pl.bbeta[h])
				st.beta[h*L+t] = float32(2 / (1 + math.Exp(-x)))
			}
		}
	})
	if pl.bgate != nil {
		st.G = make([]float64, H*L)
		native.ParallelFor(H, workers, func(h int) {
			var acc float64
			for t := 0; t < L; t++ {
				x := float64(bg[t*pl.nbg+H+h] + pl.bgate[h])
				acc += math.Min(x, 0) - math.Log1p(math.Exp(-math.Abs(x))) // log sigmoid
				st.G[h*L+t] = acc
			}
		})
	}
	return st
}

// pathBlocks holds, per head and key block, the transported keys (as
// transposed blocks for QKBlock), W transposed, -Z (the block's WY form)
// and -M, where M = T strict_tril(W K^T) carries the block's raw keys to
// any later step of the same block (the diagonal block's scores).
type pathBlocks struct {
	kt, wt, zneg []float32 // each [H][nkb][64*d]
	mneg         []float32 // [H][nkb][64*64]
	pi           []float32 // [H][nkb][d*d] the block's product I - W^T Z
}

// newPathBlocks builds the per-block data from the raw keys in bufs.kt, in
// the UT form of the PaTH paper: with the block's steps W (rows w_t) and
// beta, T = (I + diag(beta) strict_tril(W W^T))^-1 diag(beta) is lower
// triangular, and for steps a < t <= b of the block
//
//	H_b ... H_{a+1} = I - W_(a,b]^T T_(a,b] W_(a,b]
//
// (a principal block of a triangular inverse is the inverse of that block
// of the matrix). So Z = T W gives the whole block's product (I - W^T Z),
// and with M = T strict_tril(W K^T) the keys carried to the block's end are
// K~^T = K^T - W^T M and the diagonal block's scores are
// Q K^T - tril(Q W^T) M. Both T-products come from one blocked forward
// substitution (pathSolve), so all but O(64 * 12) of each block's work
// runs in the vector kernels.
//
// reuse, when it has this shape's sizes (an earlier layer's blocks), is
// overwritten instead of allocating: fresh pages cost more than the work.
func newPathBlocks(s *attnShape, bufs *headBufs, st *pathSteps, workers int, reuse *pathBlocks) *pathBlocks {
	d, L, nkb := s.d, s.L, s.nkb()
	n := s.H * nkb * blockK * d
	pb := reuse
	if pb == nil || len(pb.kt) != n || len(pb.mneg) != s.H*nkb*blockK*blockK {
		pb = &pathBlocks{kt: make([]float32, n), wt: make([]float32, n), zneg: make([]float32, n),
			mneg: make([]float32, s.H*nkb*blockK*blockK), pi: make([]float32, s.H*nkb*d*d)}
	}
	native.ParallelFor(s.H*nkb, workers, func(task int) {
		h, kb := task/nkb, task%nkb
		off := (h*nkb + kb) * blockK * d
		moff := (h*nkb + kb) * blockK * blockK
		j0, nk := kb*blockK, min(blockK, L-kb*blockK)
		ss := solveScratches.get(d)
		defer solveScratches.put(ss)
		// The block's steps, W's rows zero-padded past nk; the "order"
		// mutation takes them in reverse, so the block's product runs the
		// wrong way.
		step := func(t int) int { return j0 + t }
		if pathBroken == "order" {
			step = func(t int) int { return j0 + nk - 1 - t }
		}
		for t := 0; t < nk; t++ {
			copy(ss.wr[t*d:(t+1)*d], st.w[(h*L+step(t))*d:])
			ss.beta[t] = st.beta[h*L+step(t)]
		}
		clear(ss.wr[nk*d:])
		wt := pb.wt[off : off+blockK*d]
		native.Transpose(wt, ss.wr, blockK, d) // W's zero rows past nk: zero columns
		kraw := bufs.kt[off : off+blockK*d]
		native.QKBlock(ss.ww, ss.wr, wt, blockK, d, blockK)   // w_t . w_s
		native.QKBlock(ss.wk, ss.wr, kraw, blockK, d, blockK) // w_t . k_j
		zneg, mneg := pb.zneg[off:off+blockK*d], pb.mneg[moff:moff+blockK*blockK]
		clear(zneg)
		clear(mneg)
		pathSolve(ss, zneg, mneg, nk, d)
		kt := pb.kt[off : off+blockK*d]
		copy(kt, kraw)
		native.PVBlock(kt, wt, mneg, d, blockK, blockK, blockK) // K~^T = K^T - W^T M
		pi := pb.pi[(h*nkb+kb)*d*d : (h*nkb+kb+1)*d*d]
		clear(pi)
		for c := 0; c < d; c++ {
			pi[c*d+c] = 1
		}
		native.PVBlock(pi, wt, zneg, d, d, blockK, blockK) // Pi = I - W^T Z
	})
	return pb
}

// solveSub is the row count of pathSolve's diagonal sub-blocks: two of the
// 6-row kernel tiles (one 12-row tile at width 32).
const solveSub = 12

// solveScratch is one worker's memory for a key block's WY form.
type solveScratch struct {
	wr, beta []float32 // the steps' rows [64][d] and betas [64]
	ww, wk   []float32 // W W^T, W K^T ([64][64])
	tb       []float32 // a sub-block's inverse [12][12]
	yz, ym   []float32 // a sub-block's right-hand sides [12][d], [12][64]
}

// solveScratches and pathScratches keep the workers' memory (every block
// overwrites what it reads).
var (
	solveScratches = newScratchPool(newSolveScratch, func(ss *solveScratch, d int) bool { return len(ss.wr) == blockK*d })
	pathScratches  = newScratchPool(newPathScratch, func(w *pathScratch, d int) bool { return len(w.u) == blockK*d })
)

func newPathScratch(d int) *pathScratch {
	a := &attnScratch{sc: make([]float32, blockK*blockK), o: make([]float32, blockK*d),
		m: make([]float32, blockK), l: make([]float32, blockK), f: make([]float32, blockK), rs: make([]float32, blockK)}
	return &pathScratch{attnScratch: a, u: make([]float32, blockK*d), u2: make([]float32, blockK*d),
		uw: make([]float32, blockK*blockK), ga: make([]float32, blockK), gb: make([]float32, blockK)}
}

func newSolveScratch(d int) *solveScratch {
	return &solveScratch{wr: make([]float32, blockK*d), beta: make([]float32, blockK),
		ww: make([]float32, blockK*blockK), wk: make([]float32, blockK*blockK),
		tb: make([]float32, solveSub*solveSub), yz: make([]float32, solveSub*d), ym: make([]float32, solveSub*blockK)}
}

// pathSolve sets -Z = -T W and -M = -T strict_tril(W K^T) (zneg [64][d] and
// mneg [64][64], both zero on entry) for the nk steps in ss, by blocked
// forward substitution of (I + D N) X = D B with N = strict_tril(W W^T),
// D = diag(beta) and B the right-hand sides: for each sub-block b of 12
// rows, Y_b = B_b - N_(b,<b) X_(<b) (one product over the rows already
// solved), then X_b = T_b Y_b with T_b = (I + D_b N_bb)^-1 D_b, the only
// scalar work (12 x 12). Solving for -B gives -X directly.
func pathSolve(ss *solveScratch, zneg, mneg []float32, nk, d int) {
	ww := ss.ww
	for b := 0; b < nk; b += solveSub {
		r := min(solveSub, nk-b)
		yz, ym := ss.yz[:r*d], ss.ym[:r*blockK]
		for t := 0; t < r; t++ {
			w, ymt, wkt := ss.wr[(b+t)*d:(b+t+1)*d], ym[t*blockK:(t+1)*blockK], ss.wk[(b+t)*blockK:(b+t+1)*blockK]
			for c, x := range w {
				yz[t*d+c] = -x
			}
			for j := 0; j < b+t; j++ { // strict_tril(W K^T): keys before the step
				ymt[j] = -wkt[j]
			}
			clear(ymt[b+t:])
		}
		if b > 0 && pathBroken != "solve" {
			// -N_(b,<b): negate those entries of W W^T in place (read once).
			for t := 0; t < r; t++ {
				row := ww[(b+t)*blockK : (b+t)*blockK+b]
				for c := range row {
					row[c] = -row[c]
				}
			}
			native.PVBlock(yz, ww[b*blockK:], zneg, r, d, blockK, b)
			native.PVBlock(ym, ww[b*blockK:], mneg, r, blockK, blockK, b)
		}
		tb := ss.tb
		for t := 0; t < r; t++ { // row t of T_b = beta_t (e_t - sum_{s<t} N_ts T_b,s)
			row := tb[t*solveSub : (t+1)*solveSub]
			clear(row)
			row[t] = 1
			for s2 := 0; s2 < t; s2++ {
				a := ww[(b+t)*blockK+b+s2]
				for c := 0; c <= s2; c++ {
					row[c] -= a * tb[s2*solveSub+c]
				}
			}
			bt := ss.beta[b+t]
			for c := 0; c <= t; c++ {
				row[c] *= bt
			}
		}
		native.PVBlock(zneg[b*d:], tb, yz, r, d, solveSub, r)
		native.PVBlock(mneg[b*blockK:], tb, ym, r, blockK, solveSub, r)
	}
}

// leave carries nq queries u ([nq][d]) out of key block i (head-major
// index h * nkb + kb), older end, into dst: dst^T = u^T Pi.
func (pb *pathBlocks) leave(dst, u []float32, i, nq, d int) {
	clear(dst[:nq*d])
	native.PVBlock(dst, u, pb.pi[i*d*d:], nq, d, d, d)
}

// pathScratch is one worker's memory: the attention scratch at 64 rows,
// the carried queries U (and the next U: u2) and the diagonal block's
// transport coefficients Q W^T.
type pathScratch struct {
	*attnScratch
	u, u2, uw []float32
	ga, gb    []float32 // the gate's per-row and per-key terms (pathBlock)
}

// pathAttend runs one layer's PaTH attention on all (head, query block)
// items, largest first, writing normalised rows into out ([L][H*d]).
func pathAttend(s *attnShape, bufs *headBufs, st *pathSteps, pb *pathBlocks, out []float32, workers int, diag *layerDiag) {
	nqb := s.nkb()
	native.ParallelFor(s.H*nqb, workers, func(t int) {
		h, qb := t%s.H, nqb-1-t/s.H
		w := pathScratches.get(s.d)
		w.stats = nil
		if diag != nil {
			w.stats = &diag.heads[h]
		}
		pathBlock(s, bufs, st, pb, w, h, qb, out)
		pathScratches.put(w)
	})
}

// pathBlock is one work item: query block qb (keys' block size) of head h,
// and with w.stats set the diagnostics of its rows.
func pathBlock(s *attnShape, bufs *headBufs, st *pathSteps, pb *pathBlocks, w *pathScratch, h, qb int, out []float32) {
	d, L, nkb := s.d, s.L, s.nkb()
	i0, nq := qb*blockK, min(blockK, s.L-qb*blockK)
	ninf := float32(math.Inf(-1))
	for r := range w.m {
		w.m[r], w.l[r], w.f[r] = ninf, 0, ninf
	}
	clear(w.o[:nq*d])
	startDiag(w.attnScratch, nq)
	scale := float32(1 / math.Sqrt(float64(d)))
	// Diagonal block (modelspec's order, j <= i in the query's own block):
	// S = Q K^T - tril(Q W^T) M, and the queries carried to the block's
	// start, U = Q - tril(Q W^T) Z (newPathBlocks).
	off := (h*nkb + qb) * blockK * d
	qblk := bufs.q[(h*L+i0)*d : (h*L+i0+nq)*d]
	native.QKBlock(w.sc, qblk, bufs.kt[off:], nq, d, blockK)
	native.QKBlock(w.uw, qblk, pb.wt[off:], nq, d, blockK)
	for r := 0; r < nq; r++ {
		clear(w.uw[r*blockK+r+1 : (r+1)*blockK])
	}
	native.PVBlock(w.sc, w.uw, pb.mneg[(h*nkb+qb)*blockK*blockK:], nq, blockK, blockK, blockK)
	maskFrom(w.sc, nq, 1)
	copy(w.u, qblk)
	native.PVBlock(w.u, w.uw, pb.zneg[off:], nq, d, blockK, blockK)
	// The gate adds (G_i - G_j) scale as (G_i - G_ref) scale + (G_ref - G_j)
	// scale, G_ref at the block's first query: G falls with position, so for
	// keys before it both terms have the sign of the sum and neither is
	// larger, and in the own block both are small. Entries above the
	// diagonal are -Inf already and stay so.
	if st.G != nil && pathBroken != "gate" {
		ref := st.G[h*L+i0]
		for r := 0; r < nq; r++ {
			w.ga[r] = float32((st.G[h*L+i0+r] - ref) * float64(scale))
		}
	}
	// The softmax step adds them (w.offA, w.offB): one call per block.
	w.offA, w.offB = nil, nil
	gate := func(j0 int) {
		if st.G == nil || pathBroken == "gate" {
			return
		}
		ref := st.G[h*L+i0]
		for j := range w.gb {
			w.gb[j] = 0
			if j0+j < L {
				w.gb[j] = float32((ref - st.G[h*L+j0+j]) * float64(scale))
			}
		}
		w.offA, w.offB = w.ga, w.gb
	}
	gate(i0)
	visit := func(kb, nk int) {
		softmaxStep(w.attnScratch, i0, nq, kb*blockK)
		vb := bufs.v[(h*s.lpad()+kb*blockK)*d:]
		if kb == qb {
			native.PVBlock(w.o, w.sc, vb, nq, d, blockK, nk)
		} else {
			native.PVBlockScaled(w.o, w.sc, vb, nq, d, blockK, nk, w.f)
		}
	}
	visit(qb, nq)
	for kb := qb - 1; kb >= 0; kb-- {
		off := (h*nkb + kb) * blockK * d
		native.QKBlock(w.sc, w.u, pb.kt[off:], nq, d, blockK)
		gate(kb * blockK)
		visit(kb, blockK)
		if kb > 0 {
			pb.leave(w.u2, w.u, h*nkb+kb, nq, d)
			w.u, w.u2 = w.u2, w.u
		}
	}
	bufs.finishBlock(s, w.attnScratch, h, i0, nq, out)
}

// pathFLOPs is the flop count of PaTH attention on L tokens and H heads of
// width d, as newPathBlocks and pathBlock spend them: per pair, score and
// value (4d) and the query's share of leaving a key block (2d^2 / 64); per
// token, its key block's forms (W W^T, W K^T, the solve, K~, Pi: about
// 12 * 64 d) and its query block's own scores and carry (Q W^T, its
// product with M and Z: about 4 * 64 d + 64^2).
func pathFLOPs(L, H, d int) float64 {
	l, dd, b := float64(L), float64(d), float64(blockK)
	perPair := 4*dd + 2*dd*dd/b
	perToken := 12*b*dd + 4*b*dd + b*b
	return float64(H) * (l*l/2*perPair + l*perToken)
}

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
// I - W^T Z with z_t = beta_t (w_t - sum_{s<t} (w_t . w_s) z_s), so leaving
// the block is u^T <- u^T - (u^T W^T) Z: two small products with the same
// kernels as the scores (QKBlock, PVBlock). Within the query's own block
// the logits are formed one pair at a time (u <- H_j u after each key).
// Query blocks are key blocks (64 rows), so the two tilings align.
//
// Cost per (query, key) pair above the diagonal block: the score (2d) and
// the value (2d) as in plain attention, plus the transport (4d): twice
// plain attention's flops (pathFLOPs).

// pathBroken names a piece that tests break on purpose ("gate", "conv",
// "order") to prove that the reference comparisons can fail; empty in every
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
// transposed blocks for QKBlock), W transposed and -Z (the block's WY form).
type pathBlocks struct {
	kt, wt, zneg []float32 // each [H][nkb][64*d]
}

// newPathBlocks builds the per-block data from the raw keys in bufs.kt.
func newPathBlocks(s *attnShape, bufs *headBufs, st *pathSteps, workers int) *pathBlocks {
	d, L, nkb := s.d, s.L, s.nkb()
	n := s.H * nkb * blockK * d
	pb := &pathBlocks{kt: make([]float32, n), wt: make([]float32, n), zneg: make([]float32, n)}
	reverse := pathBroken == "order"
	native.ParallelFor(s.H*nkb, workers, func(task int) {
		h, kb := task/nkb, task%nkb
		off := (h*nkb + kb) * blockK * d
		j0, nk := kb*blockK, min(blockK, L-kb*blockK)
		w := func(t int) []float32 { return st.w[(h*L+t)*d : (h*L+t)*d+d] }
		beta := func(t int) float32 { return st.beta[h*L+t] }
		// Keys carried to the block's end: k~_j = H_{j0+nk-1} ... H_{j+1} k_j.
		keys := make([]float32, nk*d)
		src := bufs.kt[off:]
		for j := 0; j < nk; j++ {
			for c := 0; c < d; c++ {
				keys[j*d+c] = src[c*blockK+j]
			}
		}
		order := func(lo, hi int, f func(t int)) { // t in (lo, hi], increasing (reversed under the mutation)
			for t := lo + 1; t <= hi; t++ {
				if reverse {
					f(hi + lo + 1 - t)
				} else {
					f(t)
				}
			}
		}
		for j := 0; j < nk; j++ {
			kj := keys[j*d : j*d+d]
			order(j, nk-1, func(t int) { householder(kj, w(j0+t), beta(j0+t)) })
		}
		zs := make([]float32, nk*d)
		done := make([]bool, nk)
		order(-1, nk-1, func(t int) { // z_t = beta_t (w_t - sum over earlier steps (w_t . w_s) z_s)
			wt, zt := w(j0+t), zs[t*d:t*d+d]
			copy(zt, wt)
			for s2 := 0; s2 < nk; s2++ {
				if !done[s2] {
					continue
				}
				a := dot(wt, w(j0+s2))
				for c := range zt {
					zt[c] -= a * zs[s2*d+c]
				}
			}
			for c := range zt {
				zt[c] *= beta(j0 + t)
			}
			done[t] = true
		})
		for j := 0; j < nk; j++ {
			for c := 0; c < d; c++ {
				pb.kt[off+c*blockK+j] = keys[j*d+c]
				pb.wt[off+c*blockK+j] = w(j0 + j)[c]
				pb.zneg[off+j*d+c] = -zs[j*d+c]
			}
		}
	})
	return pb
}

// leave carries nq queries u ([nq][d]) out of the key block at off, older
// end: u^T <- u^T Pi = u^T - (u^T W^T) Z (uw [nq][64] is scratch).
func (pb *pathBlocks) leave(u, uw []float32, off, nq, d int) {
	native.QKBlock(uw, u, pb.wt[off:], nq, d, blockK)
	native.PVBlock(u, uw, pb.zneg[off:], nq, d, blockK, blockK)
}

// householder applies x <- (I - beta w w^T) x.
func householder(x, w []float32, beta float32) {
	a := beta * dot(x, w)
	for c := range x {
		x[c] -= a * w[c]
	}
}

func dot(x, y []float32) float32 {
	var s float32
	for c := range x {
		s += x[c] * y[c]
	}
	return s
}

// pathScratch is one worker's memory: the attention scratch at 64 rows,
// the carried queries U and the transport coefficients U W^T.
type pathScratch struct {
	*attnScratch
	u, uw []float32
	kr    []float32 // the diagonal block's raw keys, row-major [64][d]
}

// pathAttend runs one layer's PaTH attention on all (head, query block)
// items, largest first, writing normalised rows into out ([L][H*d]).
func pathAttend(s *attnShape, bufs *headBufs, st *pathSteps, pb *pathBlocks, out []float32, workers int, diag *layerDiag) {
	nqb := s.nkb()
	scratch := make(chan *pathScratch, max(workers, 1)+1)
	native.ParallelFor(s.H*nqb, workers, func(t int) {
		h, qb := t%s.H, nqb-1-t/s.H
		var w *pathScratch
		select {
		case w = <-scratch:
		default:
			a := &attnScratch{sc: make([]float32, blockK*blockK), o: make([]float32, blockK*s.d),
				m: make([]float32, blockK), l: make([]float32, blockK), f: make([]float32, blockK), rs: make([]float32, blockK),
				pre: make([]float32, blockK)}
			w = &pathScratch{attnScratch: a, u: make([]float32, blockK*s.d), uw: make([]float32, blockK*blockK), kr: make([]float32, blockK*s.d)}
		}
		pathBlock(s, bufs, st, pb, w, h, qb, out, false)
		if diag != nil {
			w.stats = &diag.heads[h]
			pathBlock(s, bufs, st, pb, w, h, qb, out, true)
			w.stats = nil
		}
		select {
		case scratch <- w:
		default:
		}
	})
}

// pathBlock is one work item: query block qb (keys' block size) of head h.
// The first pass accumulates the output; the diagnostics pass (second)
// recomputes every score block with the final row max and sum.
func pathBlock(s *attnShape, bufs *headBufs, st *pathSteps, pb *pathBlocks, w *pathScratch, h, qb int, out []float32, second bool) {
	d, L, nkb := s.d, s.L, s.nkb()
	i0, nq := qb*blockK, min(blockK, s.L-qb*blockK)
	ninf := float32(math.Inf(-1))
	var ent, far []float64
	if second {
		ent, far = make([]float64, nq), make([]float64, nq*len(w.stats.dists))
	} else {
		for r := range w.m {
			w.m[r], w.l[r], w.f[r] = ninf, 0, ninf
		}
		clear(w.o[:nq*d])
	}
	scale := float32(1 / math.Sqrt(float64(d)))
	wv := func(t int) []float32 { return st.w[(h*L+t)*d : (h*L+t)*d+d] }
	kraw := bufs.kt[(h*nkb+qb)*blockK*d:] // this block's raw keys, transposed
	for j := 0; j < nq; j++ {
		for c := 0; c < d; c++ {
			w.kr[j*d+c] = kraw[c*blockK+j]
		}
	}
	// Diagonal block, one pair at a time: u = q_i, then u <- H_j u after key j.
	for r := 0; r < nq; r++ {
		i := i0 + r
		u := w.u[r*d : r*d+d]
		copy(u, bufs.q[(h*L+i)*d:(h*L+i)*d+d]) // scaled by 1/sqrt(d)
		row := w.sc[r*blockK : (r+1)*blockK]
		for j := range row {
			row[j] = ninf
		}
		for j := i; j >= i0; j-- {
			kj := w.kr[(j-i0)*d : (j-i0+1)*d]
			if pathBroken == "order" { // q^T H_{j+1} ... H_i k_j, from scratch
				x := append([]float32(nil), bufs.q[(h*L+i)*d:(h*L+i)*d+d]...)
				for t := j + 1; t <= i; t++ {
					householder(x, wv(t), st.beta[h*L+t])
				}
				row[j-i0] = dot(x, kj)
			} else {
				row[j-i0] = dot(u, kj)
			}
			householder(u, wv(j), st.beta[h*L+j])
		}
	}
	gate := func(j0 int) {
		if st.G == nil || pathBroken == "gate" {
			return
		}
		for r := 0; r < nq; r++ {
			gi := st.G[h*L+i0+r]
			row := w.sc[r*blockK : (r+1)*blockK]
			for j := 0; j < blockK && j0+j < L && j0+j <= i0+r; j++ {
				row[j] += float32((gi - st.G[h*L+j0+j]) * float64(scale))
			}
		}
	}
	gate(i0)
	visit := func(kb, nk int) {
		if second {
			diagBlock(w.attnScratch, w.stats, i0, nq, kb*blockK, ent, far)
			return
		}
		onlineSoftmax(w.attnScratch, nq)
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
			pb.leave(w.u, w.uw, off, nq, d)
		}
	}
	if second {
		finishDiag(w.attnScratch, w.stats, i0, nq, ent, far)
		return
	}
	D := s.H * d
	for r := 0; r < nq; r++ {
		inv := 1 / w.l[r]
		o := w.o[r*d : (r+1)*d]
		dst := out[(i0+r)*D+h*d : (i0+r)*D+h*d+d]
		for c := range dst {
			dst[c] = o[c] * inv
		}
	}
}

// pathFLOPs is the flop count of PaTH attention on L tokens and H heads of
// width d, as pathBlock spends them: per pair, score and value (4d) and the
// transport of the query (4d, the block's WY form or one Householder step).
func pathFLOPs(L, H, d int) float64 {
	return 8 * float64(L) * float64(L) / 2 * float64(d) * float64(H)
}

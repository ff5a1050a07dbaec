package nativetrain

import "routebench/model/native"

// PaTH's transported scores per (window, head), chunked: O(T^2 d) like the
// attention itself instead of the dense UT form's O(T^3) of the gomlx graph
// (model/householder_attention.go), against which model/native_agree_test.go
// checks it. The window is cut into blocks of pathChunk steps.
// Within block a (rows W, K, Q; betas D = diag(beta)), with
// N = D strict_tril(W W^T), R = D strict_tril(W K^T), A' = (I + N)^-1,
// M = A' R and Z = A' D W:
//
//	H_t ... H_{a0} = I - W^T Z    (the block's steps up to t, UT form; P_a = I - W^T Z for all of them)
//	S_aa  = tril(Q K^T) - L M     (L = tril(Q W^T): the block's own scores)
//	U0    = Q - L Z               (the block's queries carried to its start)
//	K~    = K - M^T W             (its keys carried to its end)
//
// Below the diagonal blocks, the queries after block a carried back to its
// end, X_a = [U0_{a+1}; X_{a+1} P_{a+1}] (one d x d product per later
// block), give S[after a, a] = X_a K~_a^T. Per (query, key) pair that is
// the score's 2d flops plus the carry's 2d^2 / pathChunk; the blocks add
// about 10 pathChunk^2 d per block. The tape keeps A', M, Z, K~, P and the
// X_a (T^2 d / (2 pathChunk) floats per head); L is recomputed.
//
// The backward pass from dS (lower triangular) runs the carry in reverse,
// a = 0 up: G_a = dS[after a, a] K~_a + G_{a-1}[below U0_a] P_a^T is the
// gradient of X_a (its top rows dU0_{a+1}), dP_a = X_a^T G_{a-1}[below],
// dK~_a = dS[after a, a]^T X_a. Then per block, with dL = -tril(dS M^T +
// dU0 Z^T):
//
//	dQ = dS K + dU0 + dL W,   dK = dS^T Q + dK~ + E^T W
//	dM = -L^T dS - W dK~^T,   dZ = -L^T dU0 - W dP
//	dW = dL^T Q - M dK~ - Z dP^T + D A'^T dZ + E K + F W + F^T W
//
// through the solve: with the adjoints LZ = A'^T dZ and LM = A'^T dM,
// E = D strict(LM) (the gradient of strict_tril(W K^T)), F = -D strict(LM
// M^T + LZ Z^T) (of strict_tril(W W^T)), and dbeta_t = LZ_t . w_t +
// sum_j LM_tj (w_t . k_j) - sum_s (LM M^T + LZ Z^T)_ts (w_t . w_s).

// pathChunk is the block length of the chunked form: one of the packed
// kernels' 64-column panels.
const pathChunk = 64

// chunkGeom is the block structure of a window of T steps.
type chunkGeom struct{ T, nb int }

func newChunkGeom(T int) chunkGeom { return chunkGeom{T: T, nb: (T + pathChunk - 1) / pathChunk} }

// n is block a's length (the last block may be short).
func (g chunkGeom) n(a int) int { return min(pathChunk, g.T-a*pathChunk) }

// rows is the number of queries after block a (X_a's rows).
func (g chunkGeom) rows(a int) int { return g.T - (a+1)*pathChunk }

// xoff is where X_a starts in a head's stack of X, in rows.
func (g chunkGeom) xoff(a int) int { return a*g.T - pathChunk*a*(a+1)/2 }

// xrows is the height of a head's stack of X (all X_a, a < nb - 1).
func (g chunkGeom) xrows() int { return g.xoff(max(g.nb-1, 0)) }

// allocChunks sizes the tape's chunked form for rows windows.
func (t *Trainer) allocChunks(pt *pathTape, rows int) {
	T, H, d := t.c.Context, t.c.Heads, t.c.DModel/t.c.Heads
	g, BB, n := newChunkGeom(T), pathChunk*pathChunk, rows*H
	pt.ainv, pt.mb = t.ar.raw(n*g.nb*BB), t.ar.raw(n*g.nb*BB)
	pt.zb, pt.kb = t.ar.raw(n*T*d), t.ar.raw(n*T*d)
	pt.pb, pt.xb = t.ar.raw(n*g.nb*d*d), t.ar.raw(n*g.xrows()*d)
}

// pathScratch returns a task's buffer of at least n floats (from the
// trainer's pool: a fixed number of tasks run at once, so a step allocates
// nothing after the first). Every float is written before it is read, so
// which buffer a task gets changes nothing.
func (t *Trainer) pathScratch(n int) *[]float32 {
	b, _ := t.scratch.Get().(*[]float32)
	if b == nil || cap(*b) < n {
		s := make([]float32, n)
		b = &s
	}
	*b = (*b)[:n]
	return b
}

// pathView is one (window, head)'s operands: q, k, w start at off with
// leading dimension D, beta at bo with stride H; the rest is its part of
// the tape's chunked form.
type pathView struct {
	T, D, H, d, off, bo int
	g                   chunkGeom
	q, k, w, beta       []float32
	ainv, mb            []float32 // [nb][64][64] A', M
	zb, kb              []float32 // [T][d] Z, K~
	pb                  []float32 // [nb][d][d] P
	xb                  []float32 // [xrows][d] the X_a
}

func (t *Trainer) pathView(lt *layerTape, bh int) pathView {
	T, D, H := t.c.Context, t.c.DModel, t.c.Heads
	d, b, h := D/H, bh/H, bh%H
	g, BB := newChunkGeom(T), pathChunk*pathChunk
	pt := lt.path
	at := func(x []float32, n int) []float32 { return x[bh*n : (bh+1)*n] }
	return pathView{T: T, D: D, H: H, d: d, off: b*T*D + h*d, bo: b*T*H + h, g: g,
		q: lt.q, k: lt.k, w: pt.w, beta: pt.beta,
		ainv: at(pt.ainv, g.nb*BB), mb: at(pt.mb, g.nb*BB), zb: at(pt.zb, T*d), kb: at(pt.kb, T*d),
		pb: at(pt.pb, g.nb*d*d), xb: at(pt.xb, g.xrows()*d)}
}

// betaOf is beta of step a0 + i.
func (p pathView) betaOf(a0, i int) float32 { return p.beta[p.bo+(a0+i)*p.H] }

// maskBeta scales row i of the n x n block m (leading dimension 64) by
// beta_{a0+i} and clears it from column i on (strict lower part, beta on
// the rows: N and R).
func (p pathView) maskBeta(m []float32, a0, n int) {
	for i := 0; i < n; i++ {
		row, b := m[i*pathChunk:i*pathChunk+n], p.betaOf(a0, i)
		for j := 0; j < i; j++ {
			row[j] *= b
		}
		clear(row[i:])
	}
}

// lowerQW sets the n x n block m (leading dimension 64) to tril(Q W^T)
// times sign, for block rows q and w (leading dimension D).
func (p pathView) lowerQW(m, q, w []float32, n int, sign float32) {
	runGemm1(native.Gemm{C: m, A: q, B: w, M: n, K: p.d, N: n, Ldc: pathChunk, Lda: p.D, Ldb: p.D,
		TB: true, Tri: native.LowerC})
	for i := 0; i < n; i++ {
		row := m[i*pathChunk : i*pathChunk+n]
		for j := 0; j <= i; j++ {
			row[j] *= sign
		}
		clear(row[i+1:])
	}
}

// pathPrepare builds one (window, head)'s chunked form (everything the
// scores and the backward pass read) and returns its view.
func (t *Trainer) pathPrepare(lt *layerTape, bh int) pathView {
	p := t.pathView(lt, bh)
	D, d, g := p.D, p.d, p.g
	const B, BB = pathChunk, pathChunk * pathChunk
	buf := t.pathScratch(3*BB + B*d)
	defer t.scratch.Put(buf)
	nm, rm, lneg, tmp := (*buf)[:BB], (*buf)[BB:2*BB], (*buf)[2*BB:3*BB], (*buf)[3*BB:]
	for a := 0; a < g.nb; a++ {
		a0, n := a*B, g.n(a)
		o := p.off + a0*D
		qa, ka, wa := p.q[o:], p.k[o:], p.w[o:]
		ainv, mb := p.ainv[a*BB:(a+1)*BB], p.mb[a*BB:(a+1)*BB]
		za, kta := p.zb[a0*d:], p.kb[a0*d:]
		runGemm1(native.Gemm{C: nm, A: wa, B: wa, M: n, K: d, N: n, Ldc: B, Lda: D, Ldb: D, TB: true, Tri: native.LowerC})
		p.maskBeta(nm, a0, n)
		runGemm1(native.Gemm{C: rm, A: wa, B: ka, M: n, K: d, N: n, Ldc: B, Lda: D, Ldb: D, TB: true, Tri: native.LowerC})
		p.maskBeta(rm, a0, n)
		unitLowerInverse(ainv, nm, n, B, lneg) // lneg is free until lowerQW
		runGemm1(native.Gemm{C: mb, A: ainv, B: rm, M: n, K: n, N: n, Ldc: B, Lda: B, Ldb: B, Tri: native.LowerA | native.LowerB})
		for i := 0; i < n; i++ { // D W
			b := p.betaOf(a0, i)
			for c, x := range wa[i*D : i*D+d] {
				tmp[i*d+c] = b * x
			}
		}
		runGemm1(native.Gemm{C: za, A: ainv, B: tmp, M: n, K: n, N: d, Lda: B, Tri: native.LowerA})
		runGemm1(native.Gemm{C: tmp, A: mb, B: wa, M: n, K: n, N: d, Lda: B, Ldb: D, TA: true, Tri: native.UpperA})
		for i := 0; i < n; i++ { // K~ = K - M^T W
			for c, x := range ka[i*D : i*D+d] {
				kta[i*d+c] = x - tmp[i*d+c]
			}
		}
		if a >= 1 && a <= g.nb-2 { // P = I - W^T Z, for the queries that leave the block
			pa := p.pb[a*d*d : (a+1)*d*d]
			runGemm1(native.Gemm{C: pa, A: wa, B: za, M: d, K: n, N: d, Lda: D, TA: true})
			for i := range pa {
				pa[i] = -pa[i]
			}
			for i := 0; i < d; i++ {
				pa[i*d+i]++
			}
		}
		if a >= 1 { // U0 = Q - L Z, the top rows of X_{a-1}
			p.lowerQW(lneg, qa, wa, n, -1)
			u := p.xb[g.xoff(a-1)*d:]
			for i := 0; i < n; i++ {
				copy(u[i*d:(i+1)*d], qa[i*D:i*D+d])
			}
			runGemm1(native.Gemm{C: u, A: lneg, B: za, M: n, K: n, N: d, Lda: B, Acc: true, Tri: native.LowerA})
		}
	}
	for a := g.nb - 3; a >= 0; a-- { // X_a below U0_{a+1} = X_{a+1} P_{a+1}
		runGemm1(native.Gemm{C: p.xb[(g.xoff(a)+B)*d:], A: p.xb[g.xoff(a+1)*d:], B: p.pb[(a+1)*d*d:],
			M: g.rows(a + 1), K: d, N: d})
	}
	return p
}

// xRows is where the rows of query block c start in X_a (a < c).
func (p pathView) xRows(a, c int) []float32 {
	return p.xb[(p.g.xoff(a)+(c-a-1)*pathChunk)*p.d:]
}

// pathScoreRows sets the lower triangle of query block c's rows of s
// (T x T) to their transported, unscaled q.k: the diagonal block
// tril(Q K^T) - L M and S[c, a] = X_a[c] K~_a^T before it. The part above
// the diagonal holds anything.
func (t *Trainer) pathScoreRows(p pathView, c int, s []float32) {
	T, D, d := p.T, p.D, p.d
	const B = pathChunk
	c0, n := c*B, p.g.n(c)
	buf := t.pathScratch(B * B)
	defer t.scratch.Put(buf)
	lneg := *buf
	o := p.off + c0*D
	p.lowerQW(lneg, p.q[o:], p.w[o:], n, -1)
	sc := s[c0*T:]
	runGemm1(native.Gemm{C: sc[c0:], A: p.q[o:], B: p.k[o:], M: n, K: d, N: n, Ldc: T, Lda: D, Ldb: D, TB: true, Tri: native.LowerC})
	runGemm1(native.Gemm{C: sc[c0:], A: lneg, B: p.mb[c*B*B:], M: n, K: n, N: n, Ldc: T, Lda: B, Ldb: B, Acc: true,
		Tri: native.LowerA | native.LowerB})
	for a := 0; a < c; a++ {
		runGemm1(native.Gemm{C: sc[a*B:], A: p.xRows(a, c), B: p.kb[a*B*d:], M: n, K: d, N: B, Ldc: T, TB: true})
	}
}

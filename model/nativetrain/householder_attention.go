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
// about 10 pathChunk^2 d per block. The tape keeps A', -L, M, Z, K~, P, the
// X_a (T^2 d / (2 pathChunk) floats per head) and tril(W W^T), tril(W K^T)
// (N and R before the betas, which dbeta reads; the backward pass does not
// recompute them).
//
// The backward pass (householder_backward.go) takes query blocks newest
// first, one block of dS rows (lower triangular) at a time. For query block
// c it runs that block's carry in reverse, a = 0 up to c-1: G_a = dS[c, a]
// K~_a + G_{a-1} P_a^T is the gradient of its rows of X_a (G_{c-1} is its
// dU0), dP_a += X_a[c]^T G_{a-1} and dK~_a += dS[c, a]^T X_a[c]. Then block
// c's own pass, whose inputs are complete once every query block from c on
// has been through, with dL = -tril(dS M^T + dU0 Z^T):
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

// chunkGeom is the block structure of a window of T steps and heads of d.
type chunkGeom struct{ T, d, nb int }

func newChunkGeom(T, d int) chunkGeom {
	return chunkGeom{T: T, d: d, nb: (T + pathChunk - 1) / pathChunk}
}

// n is block a's length (the last block may be short).
func (g chunkGeom) n(a int) int { return min(pathChunk, g.T-a*pathChunk) }

// rows is the number of queries after block a (X_a's rows).
func (g chunkGeom) rows(a int) int { return g.T - (a+1)*pathChunk }

// xoff is where X_a starts in a head's stack of X, in rows.
func (g chunkGeom) xoff(a int) int { return a*g.T - pathChunk*a*(a+1)/2 }

// xrows is the height of a head's stack of X (all X_a, a < nb - 1).
func (g chunkGeom) xrows() int { return g.xoff(max(g.nb-1, 0)) }

// ld is the row length of a block's [Z | M] and of the other pairs of
// operands kept side by side ([dU0 | dS], [dZ | dM]), so that a product
// with both is one call: d + 64.
func (g chunkGeom) ld() int { return g.d + pathChunk }

// allocChunks sizes the tape's chunked form for rows windows.
func (t *Trainer) allocChunks(pt *pathTape, rows int) {
	T, H, d := t.c.Context, t.c.Heads, t.c.DModel/t.c.Heads
	g, BB, n := newChunkGeom(T, d), pathChunk*pathChunk, rows*H
	pt.ainv, pt.lneg, pt.zm = t.ar.raw(n*g.nb*BB), t.ar.raw(n*g.nb*BB), t.ar.raw(n*g.nb*pathChunk*g.ld())
	pt.ww, pt.wk = t.ar.raw(n*g.nb*BB), t.ar.raw(n*g.nb*BB)
	pt.kb, pt.pb, pt.xb = t.ar.raw(n*T*d), t.ar.raw(n*g.nb*d*d), t.ar.raw(n*g.xrows()*d)
	pt.kbt, pt.pbt = t.ar.raw(n*T*d), t.ar.raw(n*g.nb*d*d)
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
	ainv                []float32 // [nb][64][64] A'
	lneg                []float32 // [nb][64][64] -L = -tril(Q W^T)
	ww, wk              []float32 // [nb][64][64] tril(W W^T), tril(W K^T): N and R before the betas (dbeta reads them)
	zm                  []float32 // [nb][64][ld] [Z | M]
	kb                  []float32 // [T][d] K~
	pb                  []float32 // [nb][d][d] P
	// K~ and P transposed, as the scores and the carry read them
	// (packing them there was once per query block): kbt [nb][d][64]
	// and pbt [nb][d][d], for the blocks with later queries only.
	kbt, pbt []float32
	xb       []float32 // [xrows][d] the X_a
}

func (t *Trainer) pathView(lt *layerTape, bh int) pathView {
	T, D, H := t.c.Context, t.c.DModel, t.c.Heads
	d, b, h := D/H, bh/H, bh%H
	g, BB := newChunkGeom(T, d), pathChunk*pathChunk
	pt := lt.path
	at := func(x []float32, n int) []float32 { return x[bh*n : (bh+1)*n] }
	return pathView{T: T, D: D, H: H, d: d, off: b*T*D + h*d, bo: b*T*H + h, g: g,
		q: lt.q, k: lt.k, w: pt.w, beta: pt.beta,
		ainv: at(pt.ainv, g.nb*BB), lneg: at(pt.lneg, g.nb*BB), ww: at(pt.ww, g.nb*BB), wk: at(pt.wk, g.nb*BB), zm: at(pt.zm, g.nb*pathChunk*g.ld()), kb: at(pt.kb, T*d), kbt: at(pt.kbt, T*d),
		pb: at(pt.pb, g.nb*d*d), pbt: at(pt.pbt, g.nb*d*d), xb: at(pt.xb, g.xrows()*d)}
}

// zmOf is block a's [Z | M] (leading dimension ld; M from column d).
func (p pathView) zmOf(a int) []float32 {
	n := pathChunk * p.g.ld()
	return p.zm[a*n : (a+1)*n]
}

// betaOf is beta of step a0 + i.
func (p pathView) betaOf(a0, i int) float32 { return p.beta[p.bo+(a0+i)*p.H] }

// maskBeta scales row i of the n x n block m (leading dimension ld) by
// beta_{a0+i} and clears it from column i on (strict lower part, beta on
// the rows: N and R).
func (p pathView) maskBeta(m []float32, ld, a0, n int) {
	for i := 0; i < n; i++ {
		row := m[i*ld : i*ld+n]
		native.Scale(row[:i], p.betaOf(a0, i))
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
		native.Scale(row[:i+1], sign)
		clear(row[i+1:])
	}
}

// pathForward is one (window, head)'s chunked form while its scores are
// made: the view and the diagonal blocks' transport terms -L M.
type pathForward struct {
	pathView
	buf  *[]float32
	diag []float32 // [nb][64][ld]: -L [Z | M] (-L Z in the first d columns)
}

// pathPrepare builds one (window, head)'s chunked form (everything the
// scores and the backward pass read); release returns its scratch.
func (t *Trainer) pathPrepare(lt *layerTape, bh int) *pathForward {
	p := t.pathView(lt, bh)
	D, d, g, ld := p.D, p.d, p.g, p.g.ld()
	const B, BB = pathChunk, pathChunk * pathChunk
	pf := &pathForward{pathView: p, buf: t.pathScratch(g.nb*B*ld + 2*BB + B*ld + B*d)}
	f := *pf.buf
	take := func(n int) []float32 { x := f[:n]; f = f[n:]; return x }
	pf.diag = take(g.nb * B * ld)
	nm, inv, rhs, tmp := take(BB), take(BB), take(B*ld), take(B*d)
	for a := 0; a < g.nb; a++ {
		a0, n := a*B, g.n(a)
		o := p.off + a0*D
		qa, ka, wa := p.q[o:], p.k[o:], p.w[o:]
		ainv, lneg, zm := p.ainv[a*BB:(a+1)*BB], p.lneg[a*BB:(a+1)*BB], p.zmOf(a)
		kta := p.kb[a0*d:]
		ww, wk := p.ww[a*BB:(a+1)*BB], p.wk[a*BB:(a+1)*BB]
		// The block's tape outputs, cleared before the products write them:
		// the lines come into cache in one burst of stores, where the
		// kernels' stores into uncached lines had run the products at a
		// third of their rate (55-100 against 160-185 GFLOP/s on one core,
		// a step 1.4-2% faster). Every element is written again below.
		clear(ww)
		clear(wk)
		clear(lneg)
		clear(ainv)
		clear(zm)
		runGemm1(native.Gemm{C: ww, A: wa, B: wa, M: n, K: d, N: n, Ldc: B, Lda: D, Ldb: D, TB: true, Tri: native.LowerC})
		for i := 0; i < n; i++ { // maskBeta reads the strict lower part
			copy(nm[i*B:i*B+i], ww[i*B:i*B+i])
		}
		p.maskBeta(nm, B, a0, n)
		// The right-hand sides [D W | R] side by side: one solve for both.
		for i := 0; i < n; i++ {
			copy(rhs[i*ld:i*ld+d], wa[i*D:i*D+d])
			native.Scale(rhs[i*ld:i*ld+d], p.betaOf(a0, i))
		}
		runGemm1(native.Gemm{C: wk, A: wa, B: ka, M: n, K: d, N: n, Ldc: B, Lda: D, Ldb: D, TB: true, Tri: native.LowerC})
		for i := 0; i < n; i++ {
			copy(rhs[d+i*ld:d+i*ld+i], wk[i*B:i*B+i])
		}
		p.maskBeta(rhs[d:], ld, a0, n)
		unitLowerInverse(ainv, nm, n, B, inv)
		runGemm1(native.Gemm{C: zm, A: ainv, B: rhs, M: n, K: n, N: d + n, Ldc: ld, Lda: B, Ldb: ld, Tri: native.LowerA})
		runGemm1(native.Gemm{C: tmp, A: zm[d:], B: wa, M: n, K: n, N: d, Lda: ld, Ldb: D, TA: true, Tri: native.UpperA})
		native.Scale(tmp[:n*d], -1) // K~ = K - M^T W, as K + (-M^T W): the same bits
		for i := 0; i < n; i++ {
			copy(kta[i*d:(i+1)*d], ka[i*D:i*D+d])
		}
		native.Add(kta[:n*d], tmp[:n*d])
		if a <= g.nb-2 { // full blocks only: the last one has no later queries
			native.Transpose(p.kbt[a0*d:(a0+B)*d], kta[:B*d], B, d)
		}
		if a >= 1 && a <= g.nb-2 { // P = I - W^T Z, for the queries that leave the block
			pa := p.pb[a*d*d : (a+1)*d*d]
			runGemm1(native.Gemm{C: pa, A: wa, B: zm, M: d, K: n, N: d, Lda: D, Ldb: ld, TA: true})
			native.Scale(pa, -1)
			for i := 0; i < d; i++ {
				pa[i*d+i]++
			}
			native.Transpose(p.pbt[a*d*d:(a+1)*d*d], pa, d, d)
		}
		// -L [Z | M]: the diagonal block's scores take -L M, and U0 = Q - L Z
		// is the top of X_{a-1}. -L stays on the tape for the backward pass.
		p.lowerQW(lneg, qa, wa, n, -1)
		dg := pf.diag[a*B*ld:]
		runGemm1(native.Gemm{C: dg, A: lneg, B: zm, M: n, K: n, N: d + n, Ldc: ld, Lda: B, Ldb: ld, Tri: native.LowerA})
		if a >= 1 {
			u := p.xb[g.xoff(a-1)*d:]
			for i := 0; i < n; i++ {
				ur := u[i*d : (i+1)*d]
				copy(ur, qa[i*D:i*D+d])
				native.Add(ur, dg[i*ld:i*ld+d])
			}
		}
	}
	for a := g.nb - 3; a >= 0; a-- { // X_a below U0_{a+1} = X_{a+1} P_{a+1}
		runGemm1(native.Gemm{C: p.xb[(g.xoff(a)+B)*d:], A: p.xb[g.xoff(a+1)*d:], B: p.pb[(a+1)*d*d:],
			M: g.rows(a + 1), K: d, N: d})
	}
	return pf
}

func (t *Trainer) releasePathForward(pf *pathForward) { t.scratch.Put(pf.buf) }

// xRows is where the rows of query block c start in X_a (a < c).
func (p pathView) xRows(a, c int) []float32 {
	return p.xb[(p.g.xoff(a)+(c-a-1)*pathChunk)*p.d:]
}

// pathScoreRows sets the lower triangle of query block c's rows of s
// (T x T) to their transported, unscaled q.k: the diagonal block
// tril(Q K^T) - L M and S[c, a] = X_a[c] K~_a^T before it. The part above
// the diagonal holds anything.
func (pf *pathForward) scoreRows(c int, s []float32) {
	T, D, d, ld := pf.T, pf.D, pf.d, pf.g.ld()
	const B = pathChunk
	c0, n := c*B, pf.g.n(c)
	o := pf.off + c0*D
	sc := s[c0*T:]
	runGemm1(native.Gemm{C: sc[c0:], A: pf.q[o:], B: pf.k[o:], M: n, K: d, N: n, Ldc: T, Lda: D, Ldb: D, TB: true, Tri: native.LowerC})
	dg := pf.diag[c*B*ld+d:]
	for i := 0; i < n; i++ {
		row, lm := sc[i*T+c0:i*T+c0+i+1], dg[i*ld:i*ld+i+1]
		for j := range row {
			row[j] += lm[j]
		}
	}
	for a := 0; a < c; a++ {
		runGemm1(native.Gemm{C: sc[a*B:], A: pf.xRows(a, c), B: pf.kbt[a*B*d:], M: n, K: d, N: B, Ldc: T})
	}
}

package nativetrain

import "routebench/model/native"

// PaTH's transported scores per (window, head), in the UT form of the
// gomlx graph (model/householder_attention.go): with N = diag(beta) strict_tril(W W^T),
// R = diag(beta) strict_tril(W K^T), L = tril(Q W^T) and C = (I + N)^-1 R,
//
//	S = tril(Q K^T) - L C.
//
// The T x T matrices make it O(T^3) per head, dense products for the packed
// kernels at training lengths (T <= 512); the official kernels' chunked form
// would save the cube only at lengths this trainer never sees. The forward
// pass keeps A' = (I + N)^-1 and C per head (two T x T matrices, as many as
// the probabilities); L is recomputed in the backward pass (one T x T x d
// product) rather than stored. With dS the gradient of S (lower
// triangular), the backward pass is
//
//	dL = -tril(dS C^T)                  -> dQ += dL W, dW += dL^T Q
//	X  = -strict(A'^T L^T dS)           the gradient of R (dR = A^-T dC, dC = -L^T dS)
//	Z  = -strict(X C^T)                 the gradient of N (dA = -A^-T dC C^T)
//	E  = X K + Z W                      -> dbeta_t = w_t . E_t, dW_t += beta_t E_t
//	dK += (beta X)^T W,  dW += (beta Z)^T W
//
// strict() keeps the part below the diagonal, where R and N live; every
// product skips the tiles that the triangles make zero (native.Tri).

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
// leading dimension D, beta at bo with stride H; ainv and coeff are its
// T x T matrices.
type pathView struct {
	T, D, H, d, off, bo int
	q, k, w, beta       []float32
	ainv, coeff         []float32
}

func (t *Trainer) pathView(lt *layerTape, bh int) pathView {
	T, D, H := t.c.Context, t.c.DModel, t.c.Heads
	b, h := bh/H, bh%H
	pt := lt.path
	return pathView{T: T, D: D, H: H, d: D / H, off: b*T*D + h*(D/H), bo: b*T*H + h,
		q: lt.q, k: lt.k, w: pt.w, beta: pt.beta,
		ainv: pt.ainv[bh*T*T : (bh+1)*T*T], coeff: pt.coeff[bh*T*T : (bh+1)*T*T]}
}

// maskBeta scales row t of the T x T matrix m by beta_t and clears it from
// column t on (strict lower part, beta on the rows: N and R).
func (p pathView) maskBeta(m []float32) {
	for i := 0; i < p.T; i++ {
		row, b := m[i*p.T:(i+1)*p.T], p.beta[p.bo+i*p.H]
		for j := 0; j < i; j++ {
			row[j] *= b
		}
		clear(row[i:])
	}
}

// lowerQW sets m = tril(Q W^T) times sign (diagonal included; zero above).
func (p pathView) lowerQW(m []float32, sign float32) {
	T := p.T
	native.Gemm{C: m, A: p.q[p.off:], B: p.w[p.off:], M: T, K: p.d, N: T, Lda: p.D, Ldb: p.D,
		TB: true, Tri: native.LowerC, Workers: 1}.Run()
	for i := 0; i < T; i++ {
		row := m[i*T : (i+1)*T]
		for j := 0; j <= i; j++ {
			row[j] *= sign
		}
		clear(row[i+1:])
	}
}

// pathScores sets the lower triangle of s (T x T) to one (window, head)'s
// transported, unscaled q.k (the part above the diagonal holds anything)
// and records A' and C.
func (t *Trainer) pathScores(lt *layerTape, bh int, s []float32) {
	p := t.pathView(lt, bh)
	T, TT := p.T, p.T*p.T
	buf := t.pathScratch(3 * TT)
	defer t.scratch.Put(buf)
	nL, nm, rm := (*buf)[:TT], (*buf)[TT:2*TT], (*buf)[2*TT:]
	dot := func(c, a, b []float32) {
		native.Gemm{C: c, A: a[p.off:], B: b[p.off:], M: T, K: p.d, N: T, Lda: p.D, Ldb: p.D,
			TB: true, Tri: native.LowerC, Workers: 1}.Run()
	}
	dot(s, p.q, p.k)
	dot(nm, p.w, p.w)
	p.maskBeta(nm)
	dot(rm, p.w, p.k)
	p.maskBeta(rm)
	unitLowerInverse(p.ainv, nm, T, T, nL) // nL is free until lowerQW
	native.Gemm{C: p.coeff, A: p.ainv, B: rm, M: T, K: T, N: T, Tri: t.pc.coeffTri, Workers: 1}.Run()
	p.lowerQW(nL, -1)
	native.Gemm{C: s, A: nL, B: p.coeff, M: T, K: T, N: T, Acc: true, Tri: native.LowerA | native.LowerB, Workers: 1}.Run()
}

// pathScoresBackward takes dS, the gradient of one (window, head)'s
// unscaled scores (lower triangular, zero above), adds the transport's
// terms to dq and dk (whose q.k terms the caller has set), and sets the
// head's columns of dw [N][D] and its entries of dbeta [N][H].
func (t *Trainer) pathScoresBackward(lt *layerTape, bh int, dS, dq, dk, dw, dbeta []float32) {
	p := t.pathView(lt, bh)
	T, TT, d, D, o := p.T, p.T*p.T, p.d, p.D, p.off
	buf := t.pathScratch(3*TT + T*d)
	defer t.scratch.Put(buf)
	m1, m2, m3, e := (*buf)[:TT], (*buf)[TT:2*TT], (*buf)[2*TT:3*TT], (*buf)[3*TT:]
	gemm := func(g native.Gemm) {
		g.Workers = 1
		g.Run()
	}
	// m1 = dL = -tril(dS C^T).
	gemm(native.Gemm{C: m1, A: dS, B: p.coeff, M: T, K: T, N: T, TB: true, Tri: native.LowerC | native.LowerA | native.UpperB})
	for i := 0; i < T; i++ {
		row := m1[i*T : (i+1)*T]
		for j := 0; j <= i; j++ {
			row[j] = -row[j]
		}
		clear(row[i+1:])
	}
	gemm(native.Gemm{C: dq[o:], A: m1, B: p.w[o:], M: T, K: T, N: d, Ldc: D, Ldb: D, Acc: true, Tri: native.LowerA})
	gemm(native.Gemm{C: dw[o:], A: m1, B: p.q[o:], M: T, K: T, N: d, Ldc: D, Ldb: D, TA: true, Tri: native.UpperA})
	// m3 = strict(L^T dS) = -dC; m2 = X = -strict(A'^T m3).
	p.lowerQW(m2, 1)
	gemm(native.Gemm{C: m3, A: m2, B: dS, M: T, K: T, N: T, TA: true, Tri: native.LowerC | native.UpperA | native.LowerB})
	for i := 0; i < T; i++ {
		clear(m3[i*T+i : (i+1)*T])
	}
	gemm(native.Gemm{C: m2, A: p.ainv, B: m3, M: T, K: T, N: T, TA: true, Tri: native.LowerC | native.UpperA | native.LowerB})
	for i := 0; i < T; i++ {
		row := m2[i*T : (i+1)*T]
		for j := 0; j < i; j++ {
			row[j] = -row[j]
		}
		clear(row[i:])
	}
	// m1 = Z = -strict(X C^T).
	gemm(native.Gemm{C: m1, A: m2, B: p.coeff, M: T, K: T, N: T, TB: true, Tri: native.LowerC | native.LowerA | native.UpperB})
	for i := 0; i < T; i++ {
		row := m1[i*T : (i+1)*T]
		for j := 0; j < i; j++ {
			row[j] = -row[j]
		}
		clear(row[i:])
	}
	// E = X K + Z W: the gradient of beta_t w_t as the rows of R and N.
	gemm(native.Gemm{C: e, A: m2, B: p.k[o:], M: T, K: T, N: d, Ldb: D, Tri: native.LowerA})
	gemm(native.Gemm{C: e, A: m1, B: p.w[o:], M: T, K: T, N: d, Ldb: D, Acc: true, Tri: native.LowerA})
	for i := 0; i < T; i++ {
		b, er, wr, dwr := p.beta[p.bo+i*p.H], e[i*d:(i+1)*d], p.w[o+i*D:o+i*D+d], dw[o+i*D:o+i*D+d]
		var s float32
		for j := range er {
			s += wr[j] * er[j]
			dwr[j] += b * er[j]
		}
		dbeta[p.bo+i*p.H] = s
		for j := 0; j < i; j++ {
			m1[i*T+j] *= b
			m2[i*T+j] *= b
		}
	}
	// As columns: k_j of R and w_s of N.
	t.pc.keysViaR(native.Gemm{C: dk[o:], A: m2, B: p.w[o:], M: T, K: T, N: d, Ldc: D, Ldb: D, TA: true, Acc: true, Tri: native.UpperA})
	gemm(native.Gemm{C: dw[o:], A: m1, B: p.w[o:], M: T, K: T, N: d, Ldc: D, Ldb: D, TA: true, Acc: true, Tri: native.UpperA})
}

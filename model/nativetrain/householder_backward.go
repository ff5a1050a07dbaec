package nativetrain

import (
	"math"

	"routebench/model/native"
)

// The backward pass of PaTH's attention, a block of pathChunk query rows at
// a time (the math: householder_attention.go): each block's dS is made,
// fed to the transport's carry and dropped while in cache, so no head's
// T x T gradient goes to memory. The query blocks go newest first: when
// block c's turn comes, every later query block has added its part to
// c's sums (dK~_c, dP_c), so c's own pass runs at once, on operands still
// in cache.

// attentionBackwardPath sets dq, dk, dv, dw, dbeta and (path-fox) dG from
// dO and the tape.
func (t *Trainer) attentionBackwardPath(lt *layerTape, dO, dq, dk, dv, dw, dbeta, dG []float32, rows int) {
	c := t.c
	T, D, H := c.Context, c.DModel, c.Heads
	d := D / H
	scale := float32(1 / math.Sqrt(float64(d)))
	native.ParallelFor(rows*H, t.workers, func(bh int) {
		off := (bh/H)*T*D + (bh%H)*d
		P := lt.p[bh*T*T : (bh+1)*T*T]
		p := t.pathView(lt, bh)
		pg := t.newPathGrads(p)
		defer t.releasePathGrads(pg)
		dS := pg.dS
		g0 := (bh/H)*T*H + bh%H // position 0 of this window and head in dG
		// ng is -dG of this window and head, contiguous, so that a row of
		// dS goes in as one vector pass (dG itself has stride H).
		ng := pg.ng
		clear(ng)
		for cb := p.g.nb - 1; cb >= 0; cb-- {
			i0 := cb * pathChunk
			i1 := i0 + p.g.n(cb)
			m, acc := i1-i0, cb < p.g.nb-1
			// dv[:i1] (+)= P[i0:i1]^T dO[i0:i1]: rows past i1 get nothing
			// from this block (the first, the last block, sets them all).
			native.Gemm{C: dv[off:], A: P[i0*T:], B: dO[off+i0*D:], M: i1, K: m, N: d, Ldc: D, Lda: T, Ldb: D,
				TA: true, Acc: acc, Workers: 1}.Run()
			native.Gemm{C: dS, A: dO[off+i0*D:], B: lt.v[off:], M: m, K: d, N: i1, Ldc: T, Lda: D, Ldb: D,
				TB: true, Workers: 1}.Run()
			for i := i0; i < i1; i++ {
				row := dS[(i-i0)*T : (i-i0+1)*T]
				t.softmaxGradRow(row, P[i*T:(i+1)*T], dO[off+i*D:off+i*D+d], lt.o[off+i*D:off+i*D+d], i, i1, scale)
				if dG != nil {
					// s_ij += G_i - G_j: dG_i = sum_j dS_ij - sum_k dS_ki,
					// whose first sum is 0: a softmax row's gradient sums
					// to 0 (sum_j p_j (dP_j - rd) with rd = sum_j p_j dP_j).
					// Summing it added only rounding, one scalar add per score.
					native.Add(ng[:i+1], row[:i+1])
				}
			}
			t.pathCarryRows(p, cb, pg)
			t.pathBlockBackward(p, pg, cb, dq, dk, dw, dbeta)
		}
		if dG != nil {
			for i, x := range ng {
				dG[g0+i*H] = -x
			}
		}
	})
}

// pathGrads is one (window, head)'s backward state of the transport: per
// block [dU0 | dS] (the carried queries' gradient beside the diagonal
// block of dS, [nb][64][ld]), and the gradients of the carried keys K~
// ([T][d]) and of the blocks' products P ([nb][d][d]), summed over the
// query blocks.
type pathGrads struct {
	buf      *[]float32
	dS       []float32 // [64][T] one query block's rows of dS
	duS      []float32
	dKt, dP  []float32
	g0, g1   []float32 // the carry's gradient, ping-pong ([64][d])
	dL       []float32 // [64][64] scratch of the blocks' pass
	fm       []float32
	dzm, lam []float32 // [64][ld]: [dZ | dM] and its adjoint A'^T [dZ | dM]
	npk, pnk []float32 // [d + 64][d]: [-dP^T ; -dK~], [d][ld]: [-dP | -dK~^T]
	tmp      []float32 // [64][d]
	ng       []float32 // [T] -dG of the window and head (path-fox)
}

// newPathGrads takes p's backward state from the pool, its sums zeroed.
func (t *Trainer) newPathGrads(p pathView) *pathGrads {
	const B, BB = pathChunk, pathChunk * pathChunk
	d, ld, nb := p.d, p.g.ld(), p.g.nb
	pg := &pathGrads{buf: t.pathScratch(B*p.T + nb*B*ld + p.T*d + nb*d*d + 3*B*d + 2*BB + 2*B*ld + 2*ld*d + p.T)}
	f := *pg.buf
	take := func(n int) []float32 { x := f[:n]; f = f[n:]; return x }
	pg.dS, pg.duS, pg.dKt, pg.dP = take(B*p.T), take(nb*B*ld), take(p.T*d), take(nb*d*d)
	pg.g0, pg.g1, pg.tmp = take(B*d), take(B*d), take(B*d)
	pg.dL, pg.fm = take(BB), take(BB)
	pg.dzm, pg.lam, pg.npk, pg.pnk = take(B*ld), take(B*ld), take(ld*d), take(ld*d)
	pg.ng = take(p.T)
	clear(pg.dKt)
	clear(pg.dP)
	return pg
}

func (t *Trainer) releasePathGrads(pg *pathGrads) { t.scratch.Put(pg.buf) }

// pathCarryRows takes query block c's rows of dS (pg.dS, leading dimension
// T, lower triangular) and runs the carry of its queries in reverse: it
// adds to dK~ and dP and keeps the block's [dU0 | dS].
func (t *Trainer) pathCarryRows(p pathView, c int, pg *pathGrads) {
	T, d, dd, ld := p.T, p.d, p.d*p.d, p.g.ld()
	const B = pathChunk
	n, dS := p.g.n(c), pg.dS
	duS := pg.duS[c*B*ld:]
	for i := 0; i < n; i++ {
		copy(duS[i*ld+d:i*ld+d+i+1], dS[i*T+c*B:i*T+c*B+i+1])
		clear(duS[i*ld+d+i+1 : i*ld+d+n])
	}
	gcur, gprev := pg.g0, pg.g1
	for a := 0; a < c; a++ {
		xa, dSa := p.xRows(a, c), dS[a*B:]
		runGemm1(native.Gemm{C: gcur, A: dSa, B: p.kb[a*B*d:], M: n, K: B, N: d, Lda: T})
		if a > 0 {
			t.pc.carry(native.Gemm{C: gcur, A: gprev, B: p.pbt[a*dd:], M: n, K: d, N: d, Acc: true})
			runGemm1(native.Gemm{C: pg.dP[a*dd:], A: xa, B: gprev, M: d, K: n, N: d, TA: true, Acc: true})
		}
		runGemm1(native.Gemm{C: pg.dKt[a*B*d:], A: dSa, B: xa, M: B, K: n, N: d, Lda: T, TA: true, Acc: true})
		gcur, gprev = gprev, gcur
	}
	for i := 0; i < n; i++ { // dU0 (block 0's queries are never carried: 0)
		if c > 0 {
			copy(duS[i*ld:i*ld+d], gprev[i*d:(i+1)*d])
		} else {
			clear(duS[i*ld : i*ld+d])
		}
	}
}

// pathBlockBackward runs block a's own backward pass once query blocks a
// and later have been through pathCarryRows: it sets block a's rows of the
// head's columns of dq and dk (the whole gradient, q.k terms included) and
// of dw [N][D], and its entries of dbeta [N][H].
func (t *Trainer) pathBlockBackward(p pathView, pg *pathGrads, a int, dq, dk, dw, dbeta []float32) {
	D, d, g, ld := p.D, p.d, p.g, p.g.ld()
	const B, BB = pathChunk, pathChunk * pathChunk
	dd := d * d
	dL, fm, dzm, lam, npk, pnk := pg.dL, pg.fm, pg.dzm, pg.lam, pg.npk, pg.pnk
	{
		a0, n := a*B, g.n(a)
		o := p.off + a0*D
		qa, ka, wa := p.q[o:], p.k[o:], p.w[o:]
		dqa, dka, dwa := dq[o:], dk[o:], dw[o:]
		ainv, lneg, zm := p.ainv[a*BB:(a+1)*BB], p.lneg[a*BB:(a+1)*BB], p.zmOf(a)
		duS := pg.duS[a*B*ld:]
		dSaa := duS[d:]
		nk, np := pg.dKt[a0*d:], pg.dP[a*dd:(a+1)*dd] // zero where the block has no K~ or P terms
		// npk = [-dP^T ; -dK~] ((d + n) x d) and pnk = [-dP | -dK~^T] (d x
		// (d + n)): copies and transposes, then negated (exact).
		native.TransposeInto(npk, d, np, d, d, d)
		copy(npk[dd:(d+n)*d], nk[:n*d])
		native.Scale(npk[:(d+n)*d], -1)
		for i := 0; i < d; i++ {
			copy(pnk[i*ld:i*ld+d], np[i*d:(i+1)*d])
		}
		native.TransposeInto(pnk[d:], ld, nk, d, n, d)
		for i := 0; i < d; i++ {
			native.Scale(pnk[i*ld:i*ld+d+n], -1)
		}
		// dL = -tril(dU0 Z^T + dS M^T) = -tril([dU0 | dS] [Z | M]^T).
		runGemm1(native.Gemm{C: dL, A: duS, B: zm, M: n, K: d + n, N: n, Ldc: B, Lda: ld, Ldb: ld, TB: true, Tri: native.LowerC})
		for i := 0; i < n; i++ {
			row := dL[i*B : i*B+n]
			native.Scale(row[:i+1], -1)
			clear(row[i+1:])
		}
		// dQ = dS K + dU0 + dL W.
		runGemm1(native.Gemm{C: dqa, A: dSaa, B: ka, M: n, K: n, N: d, Ldc: D, Lda: ld, Ldb: D, Tri: native.LowerA})
		for i := 0; i < n; i++ {
			native.Add(dqa[i*D:i*D+d], duS[i*ld:i*ld+d])
		}
		runGemm1(native.Gemm{C: dqa, A: dL, B: wa, M: n, K: n, N: d, Ldc: D, Lda: B, Ldb: D, Acc: true, Tri: native.LowerA})
		// dK = dS^T Q + dK~ (+ E^T W below).
		runGemm1(native.Gemm{C: dka, A: dSaa, B: qa, M: n, K: n, N: d, Ldc: D, Lda: ld, Ldb: D, TA: true, Tri: native.UpperA})
		for i := 0; i < n; i++ {
			native.Add(dka[i*D:i*D+d], nk[i*d:(i+1)*d])
		}
		// dW = dL^T Q - Z dP^T - M dK~ (+ the solve's terms below).
		runGemm1(native.Gemm{C: dwa, A: dL, B: qa, M: n, K: n, N: d, Ldc: D, Lda: B, Ldb: D, TA: true, Tri: native.UpperA})
		runGemm1(native.Gemm{C: dwa, A: zm, B: npk, M: n, K: d + n, N: d, Ldc: D, Lda: ld, Acc: true})
		// [dZ | dM] = -L^T [dU0 | dS] - W [dP | dK~^T].
		runGemm1(native.Gemm{C: dzm, A: lneg, B: duS, M: n, K: n, N: d + n, Ldc: ld, Lda: B, Ldb: ld, TA: true, Tri: native.UpperA})
		runGemm1(native.Gemm{C: dzm, A: wa, B: pnk, M: n, K: d, N: d + n, Ldc: ld, Lda: D, Ldb: ld, Acc: true})
		// The adjoints of the solve, [LZ | LM] = A'^T [dZ | dM] (LM's strict
		// lower part), and fm = LZ Z^T + LM M^T (its strict lower part is -dN).
		runGemm1(native.Gemm{C: lam, A: ainv, B: dzm, M: n, K: n, N: d + n, Ldc: ld, Lda: B, Ldb: ld, TA: true, Tri: native.UpperA})
		for i := 0; i < n; i++ {
			clear(lam[i*ld+d+i : i*ld+d+n])
		}
		runGemm1(native.Gemm{C: fm, A: lam, B: zm, M: n, K: d + n, N: n, Ldc: B, Lda: ld, Ldb: ld, TB: true, Tri: native.LowerC})
		nr, gr := p.ww[a*BB:(a+1)*BB], p.wk[a*BB:(a+1)*BB] // tril(W W^T), tril(W K^T) from the forward pass
		// dbeta; E = D LM in place, F = -D fm into fm (strict lower parts);
		// dW += D LZ.
		pathBetaRows(lam, fm, nr, gr, wa, d, D, n, func(i int, s float32) { dbeta[p.bo+(a0+i)*p.H] = s })
		bl := pg.tmp[:d]
		for i := 0; i < n; i++ {
			b := p.betaOf(a0, i)
			copy(bl, lam[i*ld:i*ld+d])
			native.Scale(bl, b)
			native.Add(dwa[i*D:i*D+d], bl)
			native.Scale(lam[i*ld+d:i*ld+d+i], b)
			native.Scale(fm[i*B:i*B+i], -b)
			clear(fm[i*B+i : i*B+n])
		}
		// dW += E K + F W + F^T W, dK += E^T W.
		runGemm1(native.Gemm{C: dwa, A: lam[d:], B: ka, M: n, K: n, N: d, Ldc: D, Lda: ld, Ldb: D, Acc: true, Tri: native.LowerA})
		runGemm1(native.Gemm{C: dwa, A: fm, B: wa, M: n, K: n, N: d, Ldc: D, Lda: B, Ldb: D, Acc: true, Tri: native.LowerA})
		runGemm1(native.Gemm{C: dwa, A: fm, B: wa, M: n, K: n, N: d, Ldc: D, Lda: B, Ldb: D, TA: true, Acc: true, Tri: native.UpperA})
		t.pc.keysViaR(native.Gemm{C: dka, A: lam[d:], B: wa, M: n, K: n, N: d, Ldc: D, Lda: ld, Ldb: D, TA: true, Acc: true, Tri: native.UpperA})
	}
}

// pathBetaRows reports, for each of a block's n rows i, dbeta_i =
// LZ_i . w_i + sum_{j<i} (LM_ij g_ij - F_ij n_ij), for lam = [LZ | LM]
// (leading dimension d + 64), F = fm, n = nr and g = gr (leading dimension
// 64) and w = wa (leading dimension D): each sum in index order in float32,
// four rows side by side (a lone sum waits on its previous add at every
// term).
func pathBetaRows(lam, fm, nr, gr, wa []float32, d, D, n int, set func(i int, s float32)) {
	const B = pathChunk
	ld := d + B
	one := func(i int, s float32, j0 int) float32 {
		lr, fr, nrr, grr := lam[i*ld+d:i*ld+d+i], fm[i*B:i*B+i], nr[i*B:i*B+i], gr[i*B:i*B+i]
		for j := j0; j < i; j++ {
			s += lr[j]*grr[j] - fr[j]*nrr[j]
		}
		return s
	}
	i := 0
	for ; i+4 <= n; i += 4 {
		var s [4]float32
		l0 := lam[i*ld : i*ld+d]
		l1, l2, l3 := lam[(i+1)*ld : (i+1)*ld+d][:d], lam[(i+2)*ld : (i+2)*ld+d][:d], lam[(i+3)*ld : (i+3)*ld+d][:d]
		w0, w1, w2, w3 := wa[i*D : i*D+d][:d], wa[(i+1)*D : (i+1)*D+d][:d], wa[(i+2)*D : (i+2)*D+d][:d], wa[(i+3)*D : (i+3)*D+d][:d]
		l1, l2, l3 = l1[:len(l0)], l2[:len(l0)], l3[:len(l0)]
		w0, w1, w2, w3 = w0[:len(l0)], w1[:len(l0)], w2[:len(l0)], w3[:len(l0)]
		for c := range l0 {
			s[0] += l0[c] * w0[c]
			s[1] += l1[c] * w1[c]
			s[2] += l2[c] * w2[c]
			s[3] += l3[c] * w3[c]
		}
		// The terms j < i all four rows have, side by side; then each row's rest.
		l0, g0, f0, n0 := lam[i*ld+d:i*ld+d+i], gr[i*B:i*B+i], fm[i*B:i*B+i], nr[i*B:i*B+i]
		k := (i + 1) * B
		l1, g1, f1, n1 := lam[(i+1)*ld+d:(i+1)*ld+d+i], gr[k:k+i], fm[k:k+i], nr[k:k+i]
		k += B
		l2, g2, f2, n2 := lam[(i+2)*ld+d:(i+2)*ld+d+i], gr[k:k+i], fm[k:k+i], nr[k:k+i]
		k += B
		l3, g3, f3, n3 := lam[(i+3)*ld+d:(i+3)*ld+d+i], gr[k:k+i], fm[k:k+i], nr[k:k+i]
		m := len(l0) // equal lengths, stated so that the loop has no bounds checks
		g0, f0, n0 = g0[:m], f0[:m], n0[:m]
		l1, g1, f1, n1 = l1[:m], g1[:m], f1[:m], n1[:m]
		l2, g2, f2, n2 = l2[:m], g2[:m], f2[:m], n2[:m]
		l3, g3, f3, n3 = l3[:m], g3[:m], f3[:m], n3[:m]
		s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
		for j := range l0 {
			s0 += l0[j]*g0[j] - f0[j]*n0[j]
			s1 += l1[j]*g1[j] - f1[j]*n1[j]
			s2 += l2[j]*g2[j] - f2[j]*n2[j]
			s3 += l3[j]*g3[j] - f3[j]*n3[j]
		}
		s = [4]float32{s0, s1, s2, s3}
		for r := range 4 {
			set(i+r, one(i+r, s[r], i))
		}
	}
	for ; i < n; i++ {
		var s float32
		lz, w := lam[i*ld:i*ld+d], wa[i*D:i*D+d]
		for c, x := range lz {
			s += x * w[c]
		}
		set(i, one(i, s, 0))
	}
}

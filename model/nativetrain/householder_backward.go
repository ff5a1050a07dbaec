package nativetrain

import (
	"math"

	"routebench/model/native"
)

// The backward pass of PaTH's attention, a block of pathChunk query rows at
// a time (the math: householder_attention.go): each block's dS is made,
// fed to the transport's carry and dropped while in cache, so no head's
// T x T gradient goes to memory; the blocks' own pass runs once the sums
// over the query blocks are complete.

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
		buf := t.pathScratch(pathChunk * T)
		defer t.scratch.Put(buf)
		dS := *buf
		g0 := (bh/H)*T*H + bh%H // position 0 of this window and head in dG
		if dG != nil {
			for i := 0; i < T; i++ {
				dG[g0+i*H] = 0
			}
		}
		for cb := 0; cb < p.g.nb; cb++ {
			i0 := cb * pathChunk
			i1 := i0 + p.g.n(cb)
			m, acc := i1-i0, i0 > 0
			// dv[:i1] (+)= P[i0:i1]^T dO[i0:i1]: rows past i1 get nothing from this block.
			native.Gemm{C: dv[off:], A: P[i0*T:], B: dO[off+i0*D:], M: i1, K: m, N: d, Ldc: D, Lda: T, Ldb: D,
				TA: true, Acc: acc, Workers: 1}.Run()
			if i1 < T && i0 == 0 {
				for j := i1; j < T; j++ {
					clear(dv[off+j*D : off+j*D+d])
				}
			}
			native.Gemm{C: dS, A: dO[off+i0*D:], B: lt.v[off:], M: m, K: d, N: i1, Ldc: T, Lda: D, Ldb: D,
				TB: true, Workers: 1}.Run()
			for i := i0; i < i1; i++ {
				rd := t.pc.probDot(dO[off+i*D:off+i*D+d], lt.o[off+i*D:off+i*D+d]) // sum_j P_ij dP_ij = dO_i . O_i
				row, pr := dS[(i-i0)*T:(i-i0+1)*T], P[i*T:(i+1)*T]
				for j := 0; j <= i; j++ {
					row[j] = pr[j] * (row[j] - rd) * scale
				}
				clear(row[i+1 : i1])
				if dG != nil {
					// s_ij += G_i - G_j: dG_i = sum_j dS_ij - sum_k dS_ki.
					var r float32
					for j, x := range row[:i+1] {
						r += x
						dG[g0+j*H] -= x
					}
					dG[g0+i*H] += r
				}
			}
			t.pathCarryRows(p, cb, dS, pg)
		}
		t.pathBlocksBackward(p, pg, dq, dk, dw, dbeta)
	})
}

// pathGrads is one (window, head)'s backward state of the transport: the
// gradients of the carried queries U0 and keys K~ ([T][d]) and of the
// blocks' products P ([nb][d][d]), summed over the query blocks, and the
// diagonal blocks of dS ([nb][64][64]).
type pathGrads struct {
	buf                *[]float32
	dU0, dKt, dP, dSd  []float32
	g0, g1             []float32 // the carry's gradient, ping-pong ([64][d])
	lneg, dL, dm, lamm []float32 // [64][64] scratch of the blocks' pass
	fm, nr, gr         []float32
	dz, lamz           []float32 // [64][d]
}

// newPathGrads takes p's backward state from the pool, its sums zeroed.
func (t *Trainer) newPathGrads(p pathView) *pathGrads {
	const B, BB = pathChunk, pathChunk * pathChunk
	Td, dd, nb := p.T*p.d, p.d*p.d, p.g.nb
	pg := &pathGrads{buf: t.pathScratch(2*Td + nb*dd + nb*BB + 4*B*p.d + 7*BB)}
	f := *pg.buf
	take := func(n int) []float32 { x := f[:n]; f = f[n:]; return x }
	pg.dU0, pg.dKt, pg.dP, pg.dSd = take(Td), take(Td), take(nb*dd), take(nb*BB)
	pg.g0, pg.g1, pg.dz, pg.lamz = take(B*p.d), take(B*p.d), take(B*p.d), take(B*p.d)
	pg.lneg, pg.dL, pg.dm, pg.lamm = take(BB), take(BB), take(BB), take(BB)
	pg.fm, pg.nr, pg.gr = take(BB), take(BB), take(BB)
	clear(pg.dKt)
	clear(pg.dP)
	return pg
}

func (t *Trainer) releasePathGrads(pg *pathGrads) { t.scratch.Put(pg.buf) }

// pathCarryRows takes query block c's rows of dS (leading dimension T,
// lower triangular) and runs the carry of its queries in reverse: it adds
// to dK~ and dP, sets dU0 of the block's rows and keeps its diagonal block.
func (t *Trainer) pathCarryRows(p pathView, c int, dS []float32, pg *pathGrads) {
	T, d, dd := p.T, p.d, p.d*p.d
	const B, BB = pathChunk, pathChunk * pathChunk
	n := p.g.n(c)
	dsd := pg.dSd[c*BB : (c+1)*BB]
	for i := 0; i < n; i++ {
		copy(dsd[i*B:i*B+i+1], dS[i*T+c*B:i*T+c*B+i+1])
		clear(dsd[i*B+i+1 : i*B+n])
	}
	gcur, gprev := pg.g0, pg.g1
	for a := 0; a < c; a++ {
		xa, dSa := p.xRows(a, c), dS[a*B:]
		runGemm1(native.Gemm{C: gcur, A: dSa, B: p.kb[a*B*d:], M: n, K: B, N: d, Lda: T})
		if a > 0 {
			t.pc.carry(native.Gemm{C: gcur, A: gprev, B: p.pb[a*dd:], M: n, K: d, N: d, TB: true, Acc: true})
			runGemm1(native.Gemm{C: pg.dP[a*dd:], A: xa, B: gprev, M: d, K: n, N: d, TA: true, Acc: true})
		}
		runGemm1(native.Gemm{C: pg.dKt[a*B*d:], A: dSa, B: xa, M: B, K: n, N: d, Lda: T, TA: true, Acc: true})
		gcur, gprev = gprev, gcur
	}
	if c > 0 {
		copy(pg.dU0[c*B*d:], gprev[:n*d])
	}
}

// pathBlocksBackward runs the blocks' backward pass once every query block
// has been through pathCarryRows: it sets the head's columns of dq and dk
// (the whole gradient, q.k terms included) and of dw [N][D], and its
// entries of dbeta [N][H].
func (t *Trainer) pathBlocksBackward(p pathView, pg *pathGrads, dq, dk, dw, dbeta []float32) {
	D, d, g := p.D, p.d, p.g
	const B, BB = pathChunk, pathChunk * pathChunk
	dd := d * d
	dU0, dKt, dP := pg.dU0, pg.dKt, pg.dP
	lneg, dL, dm, lamm, fm, nr, gr, dz, lamz := pg.lneg, pg.dL, pg.dm, pg.lamm, pg.fm, pg.nr, pg.gr, pg.dz, pg.lamz
	for a := 0; a < g.nb; a++ {
		a0, n := a*B, g.n(a)
		o := p.off + a0*D
		qa, ka, wa := p.q[o:], p.k[o:], p.w[o:]
		dqa, dka, dwa := dq[o:], dk[o:], dw[o:]
		ainv, mb, za := p.ainv[a*BB:(a+1)*BB], p.mb[a*BB:(a+1)*BB], p.zb[a0*d:]
		dSaa := pg.dSd[a*BB : (a+1)*BB]
		hasU, hasK, hasP := a >= 1, a <= g.nb-2, a >= 1 && a <= g.nb-2
		du, nk, np := dU0[a0*d:], dKt[a0*d:], dP[a*dd:(a+1)*dd]
		if hasK { // nk = -dK~
			for i := range nk[:n*d] {
				nk[i] = -nk[i]
			}
		}
		if hasP { // np = -dP
			for i := range np {
				np[i] = -np[i]
			}
		}
		p.lowerQW(lneg, qa, wa, n, -1)
		// dL = -tril(dS M^T + dU0 Z^T).
		runGemm1(native.Gemm{C: dL, A: dSaa, B: mb, M: n, K: n, N: n, Ldc: B, Lda: B, Ldb: B, TB: true,
			Tri: native.LowerC | native.LowerA | native.UpperB})
		if hasU {
			runGemm1(native.Gemm{C: dL, A: du, B: za, M: n, K: d, N: n, Ldc: B, TB: true, Acc: true, Tri: native.LowerC})
		}
		for i := 0; i < n; i++ {
			row := dL[i*B : i*B+n]
			for j := 0; j <= i; j++ {
				row[j] = -row[j]
			}
			clear(row[i+1:])
		}
		// dQ = dS K + dU0 + dL W.
		runGemm1(native.Gemm{C: dqa, A: dSaa, B: ka, M: n, K: n, N: d, Ldc: D, Lda: B, Ldb: D, Tri: native.LowerA})
		if hasU {
			for i := 0; i < n; i++ {
				row, ur := dqa[i*D:i*D+d], du[i*d:(i+1)*d]
				for c := range row {
					row[c] += ur[c]
				}
			}
		}
		runGemm1(native.Gemm{C: dqa, A: dL, B: wa, M: n, K: n, N: d, Ldc: D, Lda: B, Ldb: D, Acc: true, Tri: native.LowerA})
		// dK = dS^T Q + dK~ (+ E^T W below).
		runGemm1(native.Gemm{C: dka, A: dSaa, B: qa, M: n, K: n, N: d, Ldc: D, Lda: B, Ldb: D, TA: true, Tri: native.UpperA})
		if hasK {
			for i := 0; i < n; i++ {
				row, kr := dka[i*D:i*D+d], nk[i*d:(i+1)*d]
				for c := range row {
					row[c] -= kr[c]
				}
			}
		}
		// dW = dL^T Q - M dK~ - Z dP^T (+ the solve's terms below).
		runGemm1(native.Gemm{C: dwa, A: dL, B: qa, M: n, K: n, N: d, Ldc: D, Lda: B, Ldb: D, TA: true, Tri: native.UpperA})
		if hasK {
			runGemm1(native.Gemm{C: dwa, A: mb, B: nk, M: n, K: n, N: d, Ldc: D, Lda: B, Acc: true, Tri: native.LowerA})
		}
		if hasP {
			runGemm1(native.Gemm{C: dwa, A: za, B: np, M: n, K: d, N: d, Ldc: D, TB: true, Acc: true})
		}
		// dM = -L^T dS - W dK~^T, dZ = -L^T dU0 - W dP.
		runGemm1(native.Gemm{C: dm, A: lneg, B: dSaa, M: n, K: n, N: n, Ldc: B, Lda: B, Ldb: B, TA: true,
			Tri: native.UpperA | native.LowerB})
		if hasK {
			runGemm1(native.Gemm{C: dm, A: wa, B: nk, M: n, K: d, N: n, Ldc: B, Lda: D, TB: true, Acc: true})
		}
		if hasU {
			runGemm1(native.Gemm{C: dz, A: lneg, B: du, M: n, K: n, N: d, Lda: B, TA: true, Tri: native.UpperA})
		} else {
			clear(dz[:n*d])
		}
		if hasP {
			runGemm1(native.Gemm{C: dz, A: wa, B: np, M: n, K: d, N: d, Lda: D, Acc: true})
		}
		// The adjoints of the solve: LZ = A'^T dZ, LM = A'^T dM (strict lower part).
		runGemm1(native.Gemm{C: lamz, A: ainv, B: dz, M: n, K: n, N: d, Lda: B, TA: true, Tri: native.UpperA})
		runGemm1(native.Gemm{C: lamm, A: ainv, B: dm, M: n, K: n, N: n, Ldc: B, Lda: B, Ldb: B, TA: true,
			Tri: native.UpperA | native.LowerC})
		for i := 0; i < n; i++ {
			clear(lamm[i*B+i : i*B+n])
		}
		// fm = LM M^T + LZ Z^T (its strict lower part is -dN).
		runGemm1(native.Gemm{C: fm, A: lamm, B: mb, M: n, K: n, N: n, Ldc: B, Lda: B, Ldb: B, TB: true,
			Tri: native.LowerC | native.LowerA | native.UpperB})
		runGemm1(native.Gemm{C: fm, A: lamz, B: za, M: n, K: d, N: n, Ldc: B, TB: true, Acc: true, Tri: native.LowerC})
		runGemm1(native.Gemm{C: nr, A: wa, B: wa, M: n, K: d, N: n, Ldc: B, Lda: D, Ldb: D, TB: true, Tri: native.LowerC})
		runGemm1(native.Gemm{C: gr, A: wa, B: ka, M: n, K: d, N: n, Ldc: B, Lda: D, Ldb: D, TB: true, Tri: native.LowerC})
		// dbeta; E = D LM into lamm, F = -D fm into fm (strict lower parts);
		// dW += D LZ.
		for i := 0; i < n; i++ {
			b := p.betaOf(a0, i)
			lr, fr, nrr, grr := lamm[i*B:i*B+n], fm[i*B:i*B+n], nr[i*B:i*B+n], gr[i*B:i*B+n]
			var s float32
			for c, x := range lamz[i*d : (i+1)*d] {
				s += x * wa[i*D+c]
				dwa[i*D+c] += b * x
			}
			for j := 0; j < i; j++ {
				s += lr[j]*grr[j] - fr[j]*nrr[j]
				lr[j] *= b
				fr[j] *= -b
			}
			clear(fr[i:])
			dbeta[p.bo+(a0+i)*p.H] = s
		}
		// dW += E K + F W + F^T W, dK += E^T W.
		runGemm1(native.Gemm{C: dwa, A: lamm, B: ka, M: n, K: n, N: d, Ldc: D, Lda: B, Ldb: D, Acc: true, Tri: native.LowerA})
		runGemm1(native.Gemm{C: dwa, A: fm, B: wa, M: n, K: n, N: d, Ldc: D, Lda: B, Ldb: D, Acc: true, Tri: native.LowerA})
		runGemm1(native.Gemm{C: dwa, A: fm, B: wa, M: n, K: n, N: d, Ldc: D, Lda: B, Ldb: D, TA: true, Acc: true, Tri: native.UpperA})
		t.pc.keysViaR(native.Gemm{C: dka, A: lamm, B: wa, M: n, K: n, N: d, Ldc: D, Lda: B, Ldb: D, TA: true, Acc: true, Tri: native.UpperA})
	}
}

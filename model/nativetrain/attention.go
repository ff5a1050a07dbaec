package nativetrain

import (
	"math"

	"routebench/model/native"
	"routebench/modelspec"
)

// Attention keeps each head's T x T probabilities from the forward pass
// instead of recomputing them from the log-sum-exp (FlashAttention-2): at
// the training lengths (T <= 512) one layer's probabilities are at most
// rows x H x 1 MiB, the backward pass then needs no second QK^T product
// and no second exp per score, and each head's products are dense
// T x T x d GEMMs for the packed kernels. Heads are strided views of the
// [N][D] activations (native.Gemm's leading dimensions), so there are no
// head-major copies, and every T x T product skips the tiles that causality
// makes zero (native.Tri).

// attnRowBlock is the number of query rows whose scores, softmax and
// product with V the forward pass takes together: a head's T x T
// probabilities (1 MiB at T = 512) no longer go to memory and back between
// the three passes, the block's (192 KiB) stay in L2. A multiple of the
// kernels' 6 rows.
const attnRowBlock = 96

// attentionForward adds block l's attention output to dst (the residual
// stream) and records its tape.
func (t *Trainer) attentionForward(params [][]float32, l int, lt *layerTape, f *tape, rows int, dst []float32) {
	c := t.c
	T, D, H := c.Context, c.DModel, c.Heads
	d := D / H
	N := rows * T
	rcos, rsin := lt.rotation(f)
	proj := func(name string) []float32 {
		y := t.ar.raw(N * D)
		native.MatMul(y, lt.a1, t.param(params, blockName(l, name)), N, D, D, false, false, false, t.workers)
		return y
	}
	lt.q, lt.k, lt.v = proj("wq"), proj("wk"), proj("wv")
	if rcos != nil {
		t.forRows(N, func(i0, i1 int) {
			cs, sn := rcos[i0*D:i1*D], rsin[i0*D:i1*D]
			native.RotatePairs(lt.q[i0*D:i1*D], cs, sn, 1)
			native.RotatePairs(lt.k[i0*D:i1*D], cs, sn, 1)
			if t.v.ValueRot {
				native.RotatePairs(lt.v[i0*D:i1*D], cs, sn, 1)
			}
		})
	}
	if t.v.Householder {
		t.pathSteps(params, l, lt, rows)
	}
	var G []float64 // the forgetting gate's prefix sums (path-fox)
	if lt.path != nil {
		G = lt.path.G
	}
	lt.p, lt.o = t.ar.raw(rows*H*T*T), t.ar.raw(N*D)
	var ramps [][]float32 // per head: ALiBi's or KERPLE's bias of distance T-1-m at m
	switch {
	case t.v.ALiBi:
		ramps = aliBiRamps(modelspec.ALiBiSlopes(H), T)
	case t.v.KerpleLog: // kerple.go: from the block's current p and a
		ramps = t.kerpleRamps(params, l)
	}
	scale := float32(1 / math.Sqrt(float64(d)))
	negInf := float32(math.Inf(-1))
	native.ParallelFor(rows*H, t.workers, func(bh int) {
		h := bh % H
		off := (bh/H)*T*D + h*d
		P := lt.p[bh*T*T : (bh+1)*T*T]
		rb := attnRowBlock
		var pf *pathForward
		if t.v.Householder { // householder_attention.go
			pf, rb = t.pathPrepare(lt, bh), pathChunk
			defer t.releasePathForward(pf)
		}
		var ga, gb []float32 // the gate's G_i - G_j as (G_i - G_ref) + (G_ref - G_j)
		if G != nil {
			buf := t.pathScratch(rb + T)
			defer t.scratch.Put(buf)
			ga, gb = (*buf)[:rb], (*buf)[rb:]
		}
		g0 := (bh/H)*T*H + h // position 0 of this window and head in G
		// A block of query rows at a time: its scores, their softmax and
		// their product with V while the block is in cache.
		for i0 := 0; i0 < T; i0 += rb {
			i1 := min(T, i0+rb)
			if t.v.Householder {
				pf.scoreRows(i0/pathChunk, P)
			} else {
				native.Gemm{C: P[i0*T:], A: lt.q[off+i0*D:], B: lt.k[off:], M: i1 - i0, K: d, N: i1, Ldc: T, Lda: D, Ldb: D,
					TB: true, Workers: 1}.Run()
			}
			if G != nil { // split at the block's first row: both parts stay small next to G
				ref := G[g0+i0*H]
				for j := 0; j < i1; j++ {
					gb[j] = float32(ref - G[g0+j*H])
				}
				for i := i0; i < i1; i++ {
					ga[i-i0] = float32(G[g0+i*H] - ref)
				}
			}
			for i := i0; i < i1; i++ {
				row := P[i*T : (i+1)*T]
				if G != nil { // inside the scale, as PaTH's kernel (modelspec/householder.go)
					native.AddOffsets(row[:i+1], ga[i-i0], gb)
				}
				// The vector exp on whole 16-lane groups; masked lanes give 0.
				n16 := min(T, (i+16)&^15)
				var mx float32
				if ramps == nil {
					mx = native.ScaleMax(row[:i+1], scale)
				} else { // the bias after the scale; the max of the sums (x 1 is exact)
					native.Scale(row[:i+1], scale)
					native.Add(row[:i+1], ramps[h][T-1-i:])
					mx = native.ScaleMax(row[:i+1], 1)
				}
				for j := i + 1; j < n16; j++ {
					row[j] = negInf
				}
				// A NaN score that the max passes over still reaches the row
				// through the exp.
				native.Scale(row[:i+1], 1/native.ExpShift(row[:n16], mx))
				clear(row[i+1:])
			}
			native.Gemm{C: lt.o[off+i0*D:], A: P[i0*T:], B: lt.v[off:], M: i1 - i0, K: i1, N: d, Ldc: D, Lda: T, Ldb: D,
				Workers: 1}.Run()
		}
	})
	lt.ou = lt.o
	if rcos != nil && t.v.ValueRot {
		lt.ou = t.ar.raw(N * D)
		copy(lt.ou, lt.o)
		t.forRows(N, func(i0, i1 int) {
			native.RotatePairs(lt.ou[i0*D:i1*D], rcos[i0*D:i1*D], rsin[i0*D:i1*D], -1)
		})
	}
	native.MatMul(dst, lt.ou, t.param(params, blockName(l, "wo")), N, D, D, false, false, true, t.workers)
}

// attentionBackwardBlocked sets dq, dk and dv from dO and the tape for the
// variants without PaTH's transport, a block of query rows at a time (as
// attentionForward): the block's dS stays in cache instead of a head's
// T x T going to memory and back four times. dk and dv sum the blocks'
// terms in block order (deterministic: one task per head). dist (KERPLE's;
// nil otherwise) gets per window and head the sum of dS by distance i - j
// ([rows][H][T], kerple.go).
func (t *Trainer) attentionBackwardBlocked(lt *layerTape, dO, dq, dk, dv []float32, dist []float64, rows int) {
	c := t.c
	T, D, H := c.Context, c.DModel, c.Heads
	d := D / H
	scale := float32(1 / math.Sqrt(float64(d)))
	native.ParallelFor(rows*H, t.workers, func(bh int) {
		off := (bh/H)*T*D + (bh%H)*d
		P := lt.p[bh*T*T : (bh+1)*T*T]
		buf := t.pathScratch(attnRowBlock * T)
		defer t.scratch.Put(buf)
		dS := *buf
		for i0 := 0; i0 < T; i0 += attnRowBlock {
			i1 := min(T, i0+attnRowBlock)
			m, acc := i1-i0, i0 > 0
			// dv[:i1] (+)= P[i0:i1]^T dO[i0:i1]: rows past i1 get nothing from this block.
			native.Gemm{C: dv[off:], A: P[i0*T:], B: dO[off+i0*D:], M: i1, K: m, N: d, Ldc: D, Lda: T, Ldb: D,
				TA: true, Acc: acc, Workers: 1}.Run()
			if i1 < T && i0 == 0 {
				for j := i1; j < T; j++ {
					clear(dv[off+j*D : off+j*D+d])
					clear(dk[off+j*D : off+j*D+d])
				}
			}
			native.Gemm{C: dS, A: dO[off+i0*D:], B: lt.v[off:], M: m, K: d, N: i1, Ldc: T, Lda: D, Ldb: D,
				TB: true, Workers: 1}.Run()
			for i := i0; i < i1; i++ {
				t.softmaxGradRow(dS[(i-i0)*T:(i-i0+1)*T], P[i*T:(i+1)*T], dO[off+i*D:off+i*D+d], lt.o[off+i*D:off+i*D+d], i, i1, scale)
				if dist != nil {
					addByDistance(dist[bh*T:(bh+1)*T], dS[(i-i0)*T:], i)
				}
			}
			native.Gemm{C: dq[off+i0*D:], A: dS, B: lt.k[off:], M: m, K: i1, N: d, Ldc: D, Lda: T, Ldb: D,
				Workers: 1}.Run()
			native.Gemm{C: dk[off:], A: dS, B: lt.q[off+i0*D:], M: i1, K: m, N: d, Ldc: D, Lda: T, Ldb: D,
				TA: true, Acc: acc, Workers: 1}.Run()
		}
	})
}

// softmaxGradRow turns row i's dP (row) into its score gradient,
// dS_ij = P_ij (dP_ij - rd) scale with rd = sum_j P_ij dP_ij = dO_i . O_i
// (pr, dOi, oi: row i of P, dO, O), and clears it past i up to i1.
func (t *Trainer) softmaxGradRow(row, pr, dOi, oi []float32, i, i1 int, scale float32) {
	native.SoftmaxGrad(row[:i+1], pr[:i+1], t.pc.probDot(dOi, oi), scale)
	clear(row[i+1 : i1])
}

// aliBiRamps is, per head, ALiBi's bias -slope * (T-1-m) at m < T: the
// row of query i adds ramps[h][T-1-i+j] to its score j.
func aliBiRamps(slopes []float64, T int) [][]float32 {
	r := make([][]float32, len(slopes))
	for h, sl := range slopes {
		r[h] = make([]float32, T)
		for m := range r[h] {
			r[h][m] = float32(-sl * float64(T-1-m))
		}
	}
	return r
}

// attentionBackward takes dy, the gradient of block l's attention output,
// sets the gradients of wq, wk, wv, wo in grads and adds the rotation
// angles' gradient to dpsi ([N][H][P], learned and projected angles; may be nil), and
// returns the gradient with respect to the block's normed input a1.
func (t *Trainer) attentionBackward(params, grads [][]float32, l int, lt *layerTape, f *tape, dy, dpsi []float32) []float32 {
	D, H := t.c.DModel, t.c.Heads
	N := f.N
	rows := f.rows
	rcos, rsin := lt.rotation(f)
	g := func(name string) []float32 { return grads[t.idx[blockName(l, name)]] }
	native.MatMul(g("wo"), lt.ou, dy, D, N, D, true, false, false, t.workers)
	dO := t.ar.raw(N * D)
	native.MatMul(dO, dy, t.param(params, blockName(l, "wo")), N, D, D, false, true, false, t.workers)
	rot := rcos != nil
	if rot && t.v.ValueRot {
		// ou = R(-psi) o: d ou / d psi = (ou1, -ou0) per pair; do = R(psi) dou.
		t.forRows(N, func(i0, i1 int) {
			if dpsi != nil {
				for e := i0 * D; e < i1*D; e += 2 {
					dpsi[e/2] += dO[e]*lt.ou[e+1] - dO[e+1]*lt.ou[e]
				}
			}
			native.RotatePairs(dO[i0*D:i1*D], rcos[i0*D:i1*D], rsin[i0*D:i1*D], 1)
		})
	}
	dq, dk, dv := t.ar.raw(N*D), t.ar.raw(N*D), t.ar.raw(N*D)
	var dw, dbeta, dG []float32 // PaTH's directions, strengths and gate prefix sums
	if t.v.Householder {
		dw, dbeta = t.ar.raw(N*D), t.ar.raw(N*H)
		if t.v.ForgetGate {
			dG = t.ar.raw(N * H)
		}
	}
	if t.v.Householder {
		t.attentionBackwardPath(lt, dO, dq, dk, dv, dw, dbeta, dG, rows) // householder_backward.go
	} else {
		var dist []float64 // KERPLE: dS by distance per window and head (kerple.go)
		if t.v.KerpleLog {
			dist = make([]float64, rows*H*t.c.Context)
		}
		t.attentionBackwardBlocked(lt, dO, dq, dk, dv, dist, rows)
		if dist != nil {
			t.pc.kerpleGrad(t, params, grads, l, dist, rows, 1/math.Sqrt(float64(D/H))) // kerpleGradient
		}
	}
	if rot {
		qr, kr, vr := lt.q, lt.k, lt.v
		t.forRows(N, func(i0, i1 int) {
			if dpsi != nil {
				// y = R(psi) u: d y / d psi = (-y1, y0) per pair.
				for e := i0 * D; e < i1*D; e += 2 {
					s := -dq[e]*qr[e+1] + dq[e+1]*qr[e] - dk[e]*kr[e+1] + dk[e+1]*kr[e]
					if t.v.ValueRot {
						s += -dv[e]*vr[e+1] + dv[e+1]*vr[e]
					}
					dpsi[e/2] += s
				}
			}
			cs, sn := rcos[i0*D:i1*D], rsin[i0*D:i1*D]
			t.pc.unrotate(dq[i0*D:i1*D], cs, sn)
			t.pc.unrotate(dk[i0*D:i1*D], cs, sn)
			if t.v.ValueRot {
				t.pc.unrotate(dv[i0*D:i1*D], cs, sn)
			}
		})
	}
	da := t.ar.raw(N * D)
	for i, w := range []struct {
		name string
		dx   []float32
	}{{"wq", dq}, {"wk", dk}, {"wv", dv}} {
		native.MatMul(g(w.name), lt.a1, w.dx, D, N, D, true, false, false, t.workers)
		native.MatMul(da, w.dx, t.param(params, blockName(l, w.name)), N, D, D, false, true, i > 0, t.workers)
	}
	if dw != nil {
		t.pc.pathSteps(t, params, grads, l, lt, rows, dw, dbeta, dG, da) // pathStepsBackward, householder_steps.go
	}
	return da
}

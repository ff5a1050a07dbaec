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
// T x T x d GEMMs for the packed kernels.

// rotatePairs turns each pair (u[2e], u[2e+1]) of u by sign * psi, with
// cos/sin in modelspec.RotationCosSin's layout (one value per dim, equal on
// a pair's two dims).
func rotatePairs(u, cos, sin []float32, sign float32) {
	for e := 0; e+1 < len(u); e += 2 {
		c, s := cos[e], sign*sin[e]
		u0, u1 := u[e], u[e+1]
		u[e], u[e+1] = u0*c-u1*s, u0*s+u1*c
	}
}

// toHeads copies x [rows][T][H][d] into head-major [rows][H][T][d].
func toHeads(dst, x []float32, rows, T, H, d int) {
	for b := 0; b < rows; b++ {
		for t := 0; t < T; t++ {
			for h := 0; h < H; h++ {
				copy(dst[((b*H+h)*T+t)*d:((b*H+h)*T+t+1)*d], x[((b*T+t)*H+h)*d:((b*T+t)*H+h+1)*d])
			}
		}
	}
}

// fromHeads is the inverse of toHeads.
func fromHeads(dst, x []float32, rows, T, H, d int) {
	for b := 0; b < rows; b++ {
		for t := 0; t < T; t++ {
			for h := 0; h < H; h++ {
				copy(dst[((b*T+t)*H+h)*d:((b*T+t)*H+h+1)*d], x[((b*H+h)*T+t)*d:((b*H+h)*T+t+1)*d])
			}
		}
	}
}

// attentionForward computes block l's attention output (before the
// residual add) and records its tape.
func (t *Trainer) attentionForward(params [][]float32, l int, lt *layerTape, f *tape, rows int) []float32 {
	c := t.c
	T, D, H := c.Context, c.DModel, c.Heads
	d := D / H
	N := rows * T
	proj := func(name string) []float32 {
		y := make([]float32, N*D)
		native.MatMul(y, lt.a1, t.param(params, blockName(l, name)), N, D, D, false, false, false, t.workers)
		return y
	}
	q, k, v := proj("wq"), proj("wk"), proj("wv")
	if f.cos != nil {
		t.forRows(N, func(i0, i1 int) {
			cs, sn := f.cos[i0*D:i1*D], f.sin[i0*D:i1*D]
			rotatePairs(q[i0*D:i1*D], cs, sn, 1)
			rotatePairs(k[i0*D:i1*D], cs, sn, 1)
			if t.v.ValueRot {
				rotatePairs(v[i0*D:i1*D], cs, sn, 1)
			}
		})
	}
	lt.q, lt.k, lt.v = make([]float32, N*D), make([]float32, N*D), make([]float32, N*D)
	toHeads(lt.q, q, rows, T, H, d)
	toHeads(lt.k, k, rows, T, H, d)
	toHeads(lt.v, v, rows, T, H, d)
	lt.p, lt.o = make([]float32, rows*H*T*T), make([]float32, N*D)
	var slopes []float64
	if t.v.ALiBi {
		slopes = modelspec.ALiBiSlopes(H)
	}
	scale := float32(1 / math.Sqrt(float64(d)))
	native.ParallelFor(rows*H, t.workers, func(bh int) {
		h := bh % H
		Q, K, V := lt.q[bh*T*d:(bh+1)*T*d], lt.k[bh*T*d:(bh+1)*T*d], lt.v[bh*T*d:(bh+1)*T*d]
		P := lt.p[bh*T*T : (bh+1)*T*T]
		native.MatMul(P, Q, K, T, d, T, false, true, false, 1)
		for i := 0; i < T; i++ {
			row := P[i*T : (i+1)*T]
			mx := float32(math.Inf(-1))
			for j := 0; j <= i; j++ {
				s := row[j] * scale
				if slopes != nil {
					s += float32(-slopes[h] * float64(i-j))
				}
				row[j] = s
				mx = max(mx, s)
			}
			var sum float64
			for j := 0; j <= i; j++ {
				e := math.Exp(float64(row[j] - mx))
				row[j] = float32(e)
				sum += e
			}
			inv := float32(1 / sum)
			for j := 0; j <= i; j++ {
				row[j] *= inv
			}
			clear(row[i+1:])
		}
		native.MatMul(lt.o[bh*T*d:(bh+1)*T*d], P, V, T, T, d, false, false, false, 1)
	})
	lt.ou = make([]float32, N*D)
	fromHeads(lt.ou, lt.o, rows, T, H, d)
	if f.cos != nil && t.v.ValueRot {
		t.forRows(N, func(i0, i1 int) {
			rotatePairs(lt.ou[i0*D:i1*D], f.cos[i0*D:i1*D], f.sin[i0*D:i1*D], -1)
		})
	}
	out := make([]float32, N*D)
	native.MatMul(out, lt.ou, t.param(params, blockName(l, "wo")), N, D, D, false, false, false, t.workers)
	return out
}

// attentionBackward takes dy, the gradient of block l's attention output,
// adds the gradients of wq, wk, wv, wo to grads and the rotation angles'
// gradient to dpsi ([N][H][P], learned variants; may be nil), and returns
// the gradient with respect to the block's normed input a1.
func (t *Trainer) attentionBackward(params, grads [][]float32, l int, lt *layerTape, f *tape, dy, dpsi []float32) []float32 {
	c := t.c
	T, D, H := c.Context, c.DModel, c.Heads
	d := D / H
	N := f.N
	rows := f.rows
	g := func(name string) []float32 { return grads[t.idx[blockName(l, name)]] }
	native.MatMul(g("wo"), lt.ou, dy, D, N, D, true, false, false, t.workers)
	dou := make([]float32, N*D)
	native.MatMul(dou, dy, t.param(params, blockName(l, "wo")), N, D, D, false, true, false, t.workers)
	rot := f.cos != nil
	if rot && t.v.ValueRot {
		// ou = R(-psi) o: d ou / d psi = (ou1, -ou0) per pair; do = R(psi) dou.
		t.forRows(N, func(i0, i1 int) {
			if dpsi != nil {
				for e := i0 * D; e < i1*D; e += 2 {
					dpsi[e/2] += dou[e]*lt.ou[e+1] - dou[e+1]*lt.ou[e]
				}
			}
			rotatePairs(dou[i0*D:i1*D], f.cos[i0*D:i1*D], f.sin[i0*D:i1*D], 1)
		})
	}
	dO := make([]float32, N*D)
	toHeads(dO, dou, rows, T, H, d)
	dQ, dK, dV := make([]float32, N*D), make([]float32, N*D), make([]float32, N*D)
	scale := float32(1 / math.Sqrt(float64(d)))
	native.ParallelFor(rows*H, t.workers, func(bh int) {
		hs := func(x []float32) []float32 { return x[bh*T*d : (bh+1)*T*d] }
		Q, K, V, O, dOh := hs(lt.q), hs(lt.k), hs(lt.v), hs(lt.o), hs(dO)
		P := lt.p[bh*T*T : (bh+1)*T*T]
		native.MatMul(hs(dV), P, dOh, T, T, d, true, false, false, 1)
		dS := make([]float32, T*T)
		native.MatMul(dS, dOh, V, T, d, T, false, true, false, 1)
		for i := 0; i < T; i++ {
			var rd float32 // sum_j P_ij dP_ij = dO_i . O_i
			for cc := 0; cc < d; cc++ {
				rd += dOh[i*d+cc] * O[i*d+cc]
			}
			if broken == "softmax" {
				rd = 0
			}
			row, pr := dS[i*T:(i+1)*T], P[i*T:(i+1)*T]
			for j := 0; j <= i; j++ {
				row[j] = pr[j] * (row[j] - rd) * scale
			}
			clear(row[i+1:])
		}
		native.MatMul(hs(dQ), dS, K, T, T, d, false, false, false, 1)
		native.MatMul(hs(dK), dS, Q, T, T, d, true, false, false, 1)
	})
	flat := func(x []float32) []float32 {
		y := make([]float32, N*D)
		fromHeads(y, x, rows, T, H, d)
		return y
	}
	dq, dk, dv := flat(dQ), flat(dK), flat(dV)
	if rot {
		var qr, kr, vr []float32
		if dpsi != nil {
			qr, kr = flat(lt.q), flat(lt.k)
			if t.v.ValueRot {
				vr = flat(lt.v)
			}
		}
		t.forRows(N, func(i0, i1 int) {
			if dpsi != nil {
				// y = R(psi) u: d y / d psi = (-y1, y0) per pair.
				for e := i0 * D; e < i1*D; e += 2 {
					s := -dq[e]*qr[e+1] + dq[e+1]*qr[e] - dk[e]*kr[e+1] + dk[e+1]*kr[e]
					if vr != nil {
						s += -dv[e]*vr[e+1] + dv[e+1]*vr[e]
					}
					dpsi[e/2] += s
				}
			}
			cs, sn := f.cos[i0*D:i1*D], f.sin[i0*D:i1*D]
			if broken == "rotation" { // un-rotate the wrong way
				sn = f.cos[i0*D : i1*D]
			}
			rotatePairs(dq[i0*D:i1*D], cs, sn, -1)
			rotatePairs(dk[i0*D:i1*D], cs, sn, -1)
			if t.v.ValueRot {
				rotatePairs(dv[i0*D:i1*D], cs, sn, -1)
			}
		})
	}
	da := make([]float32, N*D)
	for _, w := range []struct {
		name string
		dx   []float32
	}{{"wq", dq}, {"wk", dk}, {"wv", dv}} {
		native.MatMul(g(w.name), lt.a1, w.dx, D, N, D, true, false, false, t.workers)
		native.MatMul(da, w.dx, t.param(params, blockName(l, w.name)), N, D, D, false, true, true, t.workers)
	}
	return da
}

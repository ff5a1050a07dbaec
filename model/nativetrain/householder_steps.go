package nativetrain

import (
	"math"

	"routebench/model/native"
	"routebench/modelspec"
)

// PaTH's Householder steps and FoX's forgetting gate per position (the math
// and the choices: modelspec/householder.go; the gomlx graph: model/householder_attention.go):
// everything but the T x T transport, which is householder_attention.go.

// pathTape is what the backward pass of one block's PaTH steps reads.
type pathTape struct {
	zr   []float32 // [N][R] a1 wpath_down
	z    []float32 // [N][D] the convolution's input
	yc   []float32 // [N][D] its output, before SiLU
	sg   []float32 // [N][D] sigmoid(yc)
	w    []float32 // [N][D] unit directions, head h in columns [h d, (h+1) d)
	inv  []float32 // [N][H] 1 / sqrt(|SiLU(yc)_h|^2 + eps)
	beta []float32 // [N][H] in (0, 2)
	gs   []float32 // [N][H] d logsigmoid(x) / dx = sigmoid(-x) at the gate's input (path-fox)
	G    []float64 // [N][H] prefix sums of the gate over each window (path-fox)
	// The chunked transport per [rows][H] (householder_attention.go): each
	// block's A' = (I + N)^-1 and -L = -tril(Q W^T) ([nb][64][64] each), [Z | M] ([nb][64][d + 64]),
	// the carried keys K~ ([T][d]), the blocks' products P ([nb][d][d]) and
	// the carried queries X_a (a stack of chunkGeom.xrows rows of d).
	ainv, lneg, zm, kb, pb, xb []float32
	ww, wk                     []float32 // each block's tril(W W^T) and tril(W K^T) before the betas
	kbt, pbt                   []float32 // K~ and P transposed (pathView)
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// pathSteps computes block l's directions w, strengths beta and (path-fox)
// gate prefix sums from the normed block input lt.a1 into lt.path.
func (t *Trainer) pathSteps(params [][]float32, l int, lt *layerTape, rows int) {
	c := t.c
	T, D, H := c.Context, c.DModel, c.Heads
	d, R, K := D/H, modelspec.PathRank, modelspec.PathConv
	N := rows * T
	pt := &pathTape{}
	lt.path = pt
	pp := func(name string) []float32 { return t.param(params, blockName(l, name)) }
	pt.zr, pt.z = t.ar.raw(N*R), t.ar.raw(N*D)
	native.MatMul(pt.zr, lt.a1, pp(modelspec.PathDown), N, D, R, false, false, false, t.workers)
	native.MatMul(pt.z, pt.zr, pp(modelspec.PathUp), N, R, D, false, false, false, t.workers)
	pt.yc, pt.sg, pt.w, pt.inv = t.ar.raw(N*D), t.ar.raw(N*D), t.ar.raw(N*D), t.ar.raw(N*H)
	conv := pp(modelspec.PathConvW)
	t.forRows(N, func(i0, i1 int) {
		var ss [4]float32
		for i := i0; i < i1; i++ {
			yc, sg, w := pt.yc[i*D:(i+1)*D], pt.sg[i*D:(i+1)*D], pt.w[i*D:(i+1)*D]
			clear(yc)
			for k := 0; k < K && k <= i%T; k++ { // z before the window counts as 0
				tap, z := conv[k*D:(k+1)*D], pt.z[(i-k)*D:(i-k+1)*D]
				native.AddMul(yc, tap, z)
			}
			native.SiLU(w, sg, yc)
			for h0 := 0; h0 < H; h0 += 4 { // the heads' |s|^2 side by side, as the backward pass's w . dw
				m := min(4, H-h0)
				rowDots(w[h0*d:(h0+m)*d], w[h0*d:(h0+m)*d], d, ss[:m])
				for h := h0; h < h0+m; h++ {
					r := float32(1 / math.Sqrt(float64(ss[h-h0])+modelspec.PathNormEps))
					pt.inv[i*H+h] = r
					native.Scale(w[h*d:(h+1)*d], r)
				}
			}
		}
	})
	t.allocChunks(pt, rows)
	pt.beta = t.headLinear(lt.a1, pp(modelspec.PathWBeta), pp(modelspec.PathBBeta), N, func(x float64) float32 { return float32(2 * sigmoid(x)) })
	if !t.v.ForgetGate {
		return
	}
	pt.gs = t.ar.raw(N * H)
	g := t.headLinear(lt.a1, pp(modelspec.FoxWGate), pp(modelspec.FoxBGate), N, func(x float64) float32 {
		return float32(min(x, 0) - math.Log1p(math.Exp(-math.Abs(x)))) // logsigmoid, stable at both ends
	})
	// The gate's derivative from its output: sigmoid(-x) = 1 - exp(logsigmoid(x)).
	for i, x := range g {
		pt.gs[i] = float32(-math.Expm1(float64(x)))
	}
	// Prefix sums in float64, so that G_i - G_j keeps its digits at any T.
	pt.G = make([]float64, N*H)
	for b := 0; b < rows; b++ {
		for h := 0; h < H; h++ {
			var s float64
			for i := b * T; i < (b+1)*T; i++ {
				s += float64(g[i*H+h])
				pt.G[i*H+h] = s
			}
		}
	}
}

// headLinear is f(a w + b) per position and head, for a [N][D], w [D][H],
// b [H]: [N][H].
func (t *Trainer) headLinear(a, w, b []float32, N int, f func(float64) float32) []float32 {
	H := len(b)
	y := t.ar.raw(N * H)
	native.MatMul(y, a, w, N, len(w)/H, H, false, false, false, t.workers)
	t.forRows(N, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			for h := 0; h < H; h++ {
				y[i*H+h] = f(float64(y[i*H+h] + b[h]))
			}
		}
	})
	return y
}

// pathStepsBackward takes the gradients of block l's directions dw [N][D],
// strengths dbeta [N][H] and gate prefix sums dG [N][H] (path-fox; nil
// otherwise), sets the gradients of the block's PaTH tensors in grads and
// adds the gradient of the normed input a1 to da.
func (t *Trainer) pathStepsBackward(params, grads [][]float32, l int, lt *layerTape, rows int, dw, dbeta, dG, da []float32) {
	c := t.c
	T, D, H := c.Context, c.DModel, c.Heads
	d, R, K := D/H, modelspec.PathRank, modelspec.PathConv
	N := rows * T
	pt := lt.path
	pp := func(name string) []float32 { return t.param(params, blockName(l, name)) }
	g := func(name string) []float32 { return grads[t.idx[blockName(l, name)]] }
	// w = s / sqrt(|s|^2 + eps) per head: ds = (dw - w (w . dw)) inv; then
	// through SiLU: d(y sigmoid(y)) / dy = sg (1 + y (1 - sg)).
	dyc := t.ar.raw(N * D)
	t.forRows(N, func(i0, i1 int) {
		var dots [4]float32
		for i := i0; i < i1; i++ {
			copy(dyc[i*D:(i+1)*D], dw[i*D:(i+1)*D])
			for h0 := 0; h0 < H; h0 += 4 { // the heads' w . dw side by side
				m := min(4, H-h0)
				o := i*D + h0*d
				rowDots(pt.w[o:o+m*d], dw[o:o+m*d], d, dots[:m])
				for h := h0; h < h0+m; h++ {
					o := i*D + h*d
					native.NormGrad(dyc[o:o+d], pt.w[o:o+d], nil, pt.inv[i*H+h], dots[h-h0])
				}
			}
			native.SiLUGradMul(dyc[i*D:(i+1)*D], pt.yc[i*D:(i+1)*D], pt.sg[i*D:(i+1)*D])
		}
	})
	// The convolution: dconv[k] = sum_t dyc_t z_{t-k} (columns in position
	// order), dz_t = sum_k conv[k] dyc_{t+k} within the window.
	conv, dconv := pp(modelspec.PathConvW), g(modelspec.PathConvW)
	t.forCols(D, func(j0, j1 int) {
		for i := 0; i < N; i++ {
			for k := 0; k < K && k <= i%T; k++ {
				native.AddMul(dconv[k*D+j0:k*D+j1], dyc[i*D+j0:i*D+j1], pt.z[(i-k)*D+j0:(i-k)*D+j1])
			}
		}
	})
	dz := t.ar.raw(N * D)
	t.pc.convTaps(t, dz, dyc, conv, N) // convTapsBackward
	native.MatMul(g(modelspec.PathUp), pt.zr, dz, R, N, D, true, false, false, t.workers)
	dzr := t.ar.raw(N * R)
	native.MatMul(dzr, dz, pp(modelspec.PathUp), N, D, R, false, true, false, t.workers)
	native.MatMul(g(modelspec.PathDown), lt.a1, dzr, D, N, R, true, false, false, t.workers)
	native.MatMul(da, dzr, pp(modelspec.PathDown), N, R, D, false, true, true, t.workers)
	// beta = 2 sigmoid(x): d beta / dx = beta (1 - beta / 2).
	dx := t.ar.raw(N * H)
	t.pc.betaGrad(dx, dbeta, pt.beta)
	t.headLinearBackward(lt.a1, pp(modelspec.PathWBeta), g(modelspec.PathWBeta), g(modelspec.PathBBeta), dx, da, N)
	if !t.v.ForgetGate {
		return
	}
	// G_t = sum_{s<=t} g_s: dg_s = sum_{t>=s} dG_t within the window, then
	// through logsigmoid.
	for b := 0; b < rows; b++ {
		for h := 0; h < H; h++ {
			var s float64
			for i := (b+1)*T - 1; i >= b*T; i-- {
				s += float64(dG[i*H+h])
				dx[i*H+h] = float32(s) * pt.gs[i*H+h]
			}
		}
	}
	t.headLinearBackward(lt.a1, pp(modelspec.FoxWGate), g(modelspec.FoxWGate), g(modelspec.FoxBGate), dx, da, N)
}

// headLinearBackward is headLinear's backward pass from dx, the gradient of
// a w + b: it sets dw and db and adds dx w^T to da.
func (t *Trainer) headLinearBackward(a, w, dw, db, dx, da []float32, N int) {
	H := len(db)
	D := len(w) / H
	native.MatMul(dw, a, dx, D, N, H, true, false, false, t.workers)
	t.columnSums(db, dx, N, H)
	native.MatMul(da, dx, w, N, H, D, false, true, true, t.workers)
}

// convTapsBackward sets dz_t = sum_k conv[k] dyc_{t+k} within each window
// of T (the short convolution's input gradient), for N positions.
func (t *Trainer) convTapsBackward(dz, dyc, conv []float32, N int) {
	T, D, K := t.c.Context, t.c.DModel, modelspec.PathConv
	t.forRows(N, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			dzr := dz[i*D : (i+1)*D]
			clear(dzr)
			for k := 0; k < K && i%T+k < T; k++ {
				native.AddMul(dzr, conv[k*D:(k+1)*D], dyc[(i+k)*D:(i+k+1)*D])
			}
		}
	})
}

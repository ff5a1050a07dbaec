package nativetrain

import (
	"routebench/model/native"
)

// backward returns the gradient of f.loss with respect to every parameter
// (Param order), in arena buffers.
func (t *Trainer) backward(params [][]float32, f *tape) [][]float32 {
	c := t.c
	T, D, F, V, H := c.Context, c.DModel, c.DHidden, c.Vocab, c.Heads
	N := f.N
	grads := make([][]float32, len(t.params))
	for i, p := range t.params {
		grads[i] = t.ar.zeros(size(p.Shape))
	}
	g := func(name string) []float32 { return grads[t.idx[name]] }

	dlog := f.dlogits
	native.MatMul(g("unembed"), f.af, dlog, D, N, V, true, false, false, t.workers)
	daf := t.ar.raw(N * D)
	native.MatMul(daf, dlog, t.param(params, "unembed"), N, V, D, false, true, false, t.workers)
	dx := t.rmsNormBackward(daf, f.nf, f.invf, t.param(params, "normf"), g("normf"), nil, N)

	var dpsi []float32
	if t.v.Learned {
		dpsi = t.ar.zeros(N * H * (D / H / 2))
	}
	for l := c.Layers - 1; l >= 0; l-- {
		lt := &f.layers[l]
		bg := func(name string) []float32 { return grads[t.idx[blockName(l, name)]] }
		// MLP: x_out = xm + gelu(a2 w1 + b1) w2 + b2.
		t.columnSums(bg("b2"), dx, N, D)
		native.MatMul(bg("w2"), lt.gel, dx, F, N, D, true, false, false, t.workers)
		du := t.ar.raw(N * F)
		native.MatMul(du, dx, t.param(params, blockName(l, "w2")), N, D, F, false, true, false, t.workers)
		t.forRows(N, func(i0, i1 int) { t.pc.geluGrad(du[i0*F:i1*F], lt.u[i0*F:i1*F], lt.th[i0*F:i1*F]) })
		t.columnSums(bg("b1"), du, N, F)
		native.MatMul(bg("w1"), lt.a2, du, D, N, F, true, false, false, t.workers)
		da2 := t.ar.raw(N * D)
		native.MatMul(da2, du, t.param(params, blockName(l, "w1")), N, F, D, false, true, false, t.workers)
		dxm := t.rmsNormBackward(da2, lt.n2, lt.inv2, t.param(params, blockName(l, "norm2")), bg("norm2"), dx, N)
		// Attention: xm = x + attn(norm1(x)).
		lpsi := dpsi
		if t.v.AngleProj { // this block's own angles
			lpsi = t.ar.zeros(N * H * (D / H / 2))
		}
		da1 := t.attentionBackward(params, grads, l, lt, f, dxm, lpsi)
		if t.v.AngleProj {
			t.projectedRotationBackward(params, grads, l, lt, f.rows, lpsi, da1) // angleproj.go
		}
		dx = t.rmsNormBackward(da1, lt.n1, lt.inv1, t.param(params, blockName(l, "norm1")), bg("norm1"), dxm, N)
	}
	t.pc.embedGrad(t, g("embed"), dx, f.tokens) // embeddingGradient
	if dpsi != nil {
		t.pc.angleGrad(t, g("angles"), dpsi, f.tokens, f.rows, T) // angleGradient
	}
	return grads
}

// rmsNormBackward takes da, the gradient of a = n * gain with n = x * inv,
// adds the gain's gradient to dgain and returns the gradient of x plus res
// (the residual branch's gradient; nil: none):
// dx = inv (dn - n mean(dn n)), dn = da * gain.
func (t *Trainer) rmsNormBackward(da, n, inv, gain, dgain, res []float32, N int) []float32 {
	D := len(gain)
	t.forCols(D, func(j0, j1 int) {
		dg := dgain[j0:j1]
		for i := 0; i < N; i++ {
			native.AddMul(dg, da[i*D+j0:i*D+j1], n[i*D+j0:i*D+j1])
		}
	})
	dx := t.ar.raw(N * D)
	t.forRows(N, func(i0, i1 int) {
		var dots [4]float32
		for i := i0; i < i1; i += 4 {
			m := min(4, i1-i)
			t.pc.normDot(dx[i*D:(i+m)*D], da[i*D:(i+m)*D], gain, n[i*D:(i+m)*D], D, dots[:m])
			for k := i; k < i+m; k++ {
				var rr []float32
				if res != nil {
					rr = res[k*D : (k+1)*D]
				}
				native.NormGrad(dx[k*D:(k+1)*D], n[k*D:(k+1)*D], rr, inv[k], dots[k-i]/float32(D))
			}
		}
	})
	return dx
}

// columnSums adds the column sums of x (N x n) to dst, rows in order.
func (t *Trainer) columnSums(dst, x []float32, N, n int) {
	t.forCols(n, func(j0, j1 int) {
		d := dst[j0:j1]
		for i := 0; i < N; i++ {
			native.Add(d, x[i*n+j0:i*n+j1])
		}
	})
}

// embeddingGradient scatters dx's rows into the rows of their tokens,
// each vocabulary block by one task in position order (deterministic,
// whatever the workers).
func (t *Trainer) embeddingGradient(de, dx []float32, tokens []int32) {
	D := t.c.DModel
	t.forCols(t.c.Vocab, func(v0, v1 int) {
		for i, x := range tokens {
			if int(x) < v0 || int(x) >= v1 {
				continue
			}
			native.Add(de[int(x)*D:(int(x)+1)*D], dx[i*D:(i+1)*D])
		}
	})
}

// angleGradient turns the gradient of the accumulated angles psi[b, t] =
// sum_{s<=t} table[x_{b,s}] into the table's: each token's row gets the
// suffix sum sum_{t>=s} dpsi[b, t] (float64, scattered in position order).
func (t *Trainer) angleGradient(dtable, dpsi []float32, tokens []int32, rows, T int) {
	HP := len(dpsi) / (rows * T)
	suf := make([]float64, HP)
	for b := 0; b < rows; b++ {
		clear(suf)
		for s := T - 1; s >= 0; s-- {
			i := b*T + s
			row := dtable[int(tokens[i])*HP : (int(tokens[i])+1)*HP]
			for k := range suf {
				suf[k] += float64(dpsi[i*HP+k])
				row[k] += float32(suf[k])
			}
		}
	}
}

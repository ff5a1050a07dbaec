package nativetrain

import "routebench/modelspec"

// KERPLE's log bias (modelspec/kerple.go): score i, j of head h gets
// -p' log(1 + a' (i - j)) after the 1/sqrt(d) scale, p' = max(p_h, eps),
// a' = max(a_h, eps), with p and a trained per block and head. The forward
// pass adds it as ALiBi's ramps (a per-head table by distance); since the
// bias depends on i - j only, its gradient is the score gradient summed by
// distance, then the chain rule through modelspec.KerpleBiasGrad.

// kerpleRamps is, per head, block l's bias of distance T-1-m at m (the
// layout of aliBiRamps: the row of query i adds ramps[h][T-1-i+j]), from
// the block's current kerple_p and kerple_a.
func (t *Trainer) kerpleRamps(params [][]float32, l int) [][]float32 {
	H, T := t.c.Heads, t.c.Context
	p, a := t.param(params, blockName(l, modelspec.KerpleP)), t.param(params, blockName(l, modelspec.KerpleA))
	r := make([][]float32, H)
	for h := range r {
		r[h] = modelspec.KerpleTable(float64(p[h]), float64(a[h]), T, 0)
	}
	return r
}

// addByDistance adds row i's score gradient ds[j], j <= i, to g[i-j].
func addByDistance(g []float64, ds []float32, i int) {
	for j, x := range ds[:i+1] {
		g[i-j] += float64(x)
	}
}

// kerpleGradient sets block l's kerple_p and kerple_a gradients from dist
// ([rows][H][T]: per window and head, the score gradient dS summed by
// distance i - j). dS is the gradient of the raw product q.k, so it carries
// the scale; the bias is added after the scale, so its gradient is
// dS / scale. Windows are summed in order, then distances in order, in
// float64: the result does not depend on the workers.
func (t *Trainer) kerpleGradient(params, grads [][]float32, l int, dist []float64, rows int, scale float64) {
	H, T := t.c.Heads, t.c.Context
	pn, an := blockName(l, modelspec.KerpleP), blockName(l, modelspec.KerpleA)
	p, a := t.param(params, pn), t.param(params, an)
	dp, da := grads[t.idx[pn]], grads[t.idx[an]]
	G := make([]float64, T)
	for h := 0; h < H; h++ {
		clear(G)
		for b := 0; b < rows; b++ {
			for n, x := range dist[(b*H+h)*T : (b*H+h+1)*T] {
				G[n] += x
			}
		}
		var sp, sa float64
		for n, g := range G {
			gp, ga := modelspec.KerpleBiasGrad(float64(p[h]), float64(a[h]), n)
			sp += g * gp
			sa += g * ga
		}
		dp[h], da[h] = float32(sp/scale), float32(sa/scale)
	}
}

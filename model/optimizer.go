package model

import (
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
)

// AdamW with decoupled weight decay on matrices only, and global-norm
// gradient clipping, written here because gomlx v0.26.0's Adam decays every
// variable (norm gains and biases too) and has no global clipping.

// learningRate is the warmup + cosine schedule at 0-based step s: linear
// from LR/warmup to LR over the warmup steps, then cosine down to MinLR at
// the last step. Computed in float64 on the host and fed as a scalar, so
// resume needs only the step number.
func learningRate(c Config, s int) float64 {
	if s < c.Warmup {
		return c.LR * float64(s+1) / float64(c.Warmup)
	}
	span := c.Steps - c.Warmup - 1
	if span <= 0 {
		return c.LR
	}
	prog := float64(s-c.Warmup) / float64(span)
	return c.MinLR + 0.5*(c.LR-c.MinLR)*(1+math.Cos(math.Pi*prog))
}

// stepScalars are the host-side per-step inputs of the update: learning
// rate and Adam bias corrections 1 - beta^t for t = s+1.
func stepScalars(c Config, s int) (lr, bc1, bc2 float32) {
	t := float64(s + 1)
	return float32(learningRate(c, s)), float32(1 - math.Pow(adamBeta1, t)), float32(1 - math.Pow(adamBeta2, t))
}

// adamW returns updated params and moments. Tensor i steps at lr times
// specs[i].LRScale (its decay too, which stays decoupled: lr_i * wd). grads are clipped jointly to
// global norm clip (clip <= 0: no clipping); gnorm is the pre-clip norm.
func adamW(specs []paramSpec, params, m, v, grads []*Node, lr, bc1, bc2 *Node, wd, clip float64) (np, nm, nv []*Node, gnorm *Node) {
	var sq *Node
	for _, g := range grads {
		s := ReduceAllSum(Square(g))
		if sq == nil {
			sq = s
		} else {
			sq = Add(sq, s)
		}
	}
	gnorm = Sqrt(sq)
	scale := OnesLike(gnorm)
	if clip > 0 {
		// min(1, clip / (norm + 1e-6))
		scale = Min(scale, Div(ScalarOne(gnorm.Graph(), gnorm.DType()), MulScalar(AddScalar(gnorm, 1e-6), 1/clip)))
	}
	for i, p := range params {
		g := Mul(grads[i], scale)
		m1 := Add(MulScalar(m[i], adamBeta1), MulScalar(g, 1-adamBeta1))
		v1 := Add(MulScalar(v[i], adamBeta2), MulScalar(Square(g), 1-adamBeta2))
		step := Div(Div(m1, bc1), AddScalar(Sqrt(Div(v1, bc2)), adamEps))
		lri := lr
		if s := specs[i].LRScale; s != 1 && s != 0 {
			lri = MulScalar(lr, s) // only where a factor applies: every other graph stays as it was
		}
		p1 := Sub(p, Mul(step, lri))
		if specs[i].Decay && wd > 0 {
			p1 = Sub(p1, Mul(p, MulScalar(lri, wd)))
		}
		np, nm, nv = append(np, p1), append(nm, m1), append(nv, v1)
	}
	return np, nm, nv, gnorm
}

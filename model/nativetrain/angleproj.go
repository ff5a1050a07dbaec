package nativetrain

import (
	"math"

	"routebench/model/native"
	"routebench/modelspec"
)

// learned-proj-qkv (modelspec/angleproj.go): block l's angles are
// theta_t = a1_t W_ang, [N][H*P], and psi_t = sum_{s<=t} theta_s within each
// window. Forward: the prefix sums in float64, reduced every step by
// modelspec.AccumulateAngles (the rule every table variant uses), then cos
// and sin in modelspec.RotationCosSin's layout. Backward: attention gives
// dpsi; dtheta_s = sum_{t>=s} dpsi_t (a suffix sum per window, float64);
// dW_ang = a1^T dtheta and da1 += dtheta W_ang^T.

// projectedRotation sets lt.cos and lt.sin from block l's normed input lt.a1.
func (t *Trainer) projectedRotation(params [][]float32, l int, lt *layerTape, rows int) {
	T, D := t.c.Context, t.c.DModel
	HP, N := D/2, rows*T
	theta := t.ar.raw(N * HP)
	native.MatMul(theta, lt.a1, t.param(params, blockName(l, modelspec.AngleProjName)), N, D, HP, false, false, false, t.workers)
	lt.cos, lt.sin = t.ar.raw(N*D), t.ar.raw(N*D)
	native.ParallelFor(rows, t.workers, func(b int) {
		acc := make([]float64, HP)
		for i := b * T; i < (b+1)*T; i++ {
			modelspec.AccumulateAngles(acc, theta[i*HP:(i+1)*HP])
			cs, sn := lt.cos[i*D:(i+1)*D], lt.sin[i*D:(i+1)*D]
			for k, a := range acc {
				c, s := float32(math.Cos(a)), float32(math.Sin(a)) // as modelspec.RotationCosSin
				cs[2*k], cs[2*k+1], sn[2*k], sn[2*k+1] = c, c, s, s
			}
		}
	})
}

// projectedRotationBackward turns dpsi [N][H*P] (block l's angles'
// gradient) into dtheta in place, adds W_ang's gradient to grads and
// dtheta W_ang^T to da (the gradient of a1).
func (t *Trainer) projectedRotationBackward(params, grads [][]float32, l int, lt *layerTape, rows int, dpsi, da []float32) {
	T, D := t.c.Context, t.c.DModel
	HP, N := D/2, rows*T
	t.pc.routeSum(t, dpsi, rows) // routeSuffixSum
	name := blockName(l, modelspec.AngleProjName)
	native.MatMul(grads[t.idx[name]], lt.a1, dpsi, D, N, HP, true, false, false, t.workers)
	native.MatMul(da, dpsi, t.param(params, name), N, HP, D, false, true, true, t.workers)
}

// routeSuffixSum turns dpsi [rows*T][H*P] into dtheta in place: dtheta_s =
// sum_{t>=s} dpsi_t within each window (float64 sums).
func (t *Trainer) routeSuffixSum(dpsi []float32, rows int) {
	T, HP := t.c.Context, t.c.DModel/2
	native.ParallelFor(rows, t.workers, func(b int) {
		suf := make([]float64, HP)
		for i := (b+1)*T - 1; i >= b*T; i-- {
			row := dpsi[i*HP : (i+1)*HP]
			for k := range suf {
				suf[k] += float64(row[k])
				row[k] = float32(suf[k])
			}
		}
	})
}

package native

import "math"

// Vector kernels of the native trainer's elementwise passes (softmax,
// cross-entropy, GELU), on the evaluator's exp so that one polynomial
// serves both: per-element math.Exp and math.Tanh were a fifth of a
// training step.

// ExpShift sets x[j] = exp(x[j] - m) for all j (any length) and returns
// their float32 sum, in a fixed order. Arguments below about -87 (and -Inf)
// give 0 or a value under 1.7e-38; relative error ~4e-7 (TestExpShiftAPI).
func ExpShift(x []float32, m float32) float32 {
	n := len(x) &^ 15
	var s float32
	if n > 0 {
		s = expShift(x[:n], m)
	}
	return s + expShiftGeneric(x[n:], m)
}

// geluTanhClamp bounds the GELU's 2z before its exp: tanh(9) rounds to 1 in
// float32, and exp stays far from overflow.
const geluTanhClamp = 18

// GELUTanh adds bias to u (when not nil; u is written back), then sets
// th[j] = tanh(k (u + 0.044715 u^3)), k = sqrt(2/pi), and
// g[j] = 0.5 u (1 + th[j]), the tanh form of GELU and the tanh its
// derivative needs; tanh = 1 - 2/(exp(2z) + 1) on the vector exp, absolute
// error ~2e-7 (TestGELUTanh). The assembly does it in one pass over the
// row (three passes and the bias's fourth were ~8% of a training step).
func GELUTanh(u, bias, th, g []float32) {
	th, g = th[:len(u)], g[:len(u)]
	if bias != nil {
		bias = bias[:len(u)]
	}
	n := 0
	if haveAsm {
		n = geluTanhAsm(u, bias, th, g)
	} else {
		n = geluTanhLanes(u, bias, th, g)
	}
	u, th, g = u[n:], th[n:], g[n:]
	if bias != nil {
		bias = bias[n:]
	}
	for j := range u {
		if bias != nil {
			u[j] += bias[j]
		}
		x := u[j]
		z := 2 * geluK * (x + float32(float32(0.044715*x)*x)*x)
		th[j] = min(max(z, -geluTanhClamp), geluTanhClamp)
	}
	ExpShift(th, 0)
	for j, x := range u {
		t := 1 - 2/(th[j]+1)
		th[j] = t
		g[j] = 0.5 * x * (1 + t)
	}
}

// GELUGradMul sets du[j] *= GELU'(u[j]) from th[j], GELUTanh's tanh:
// 0.5 (1 + th) + 0.5 u (1 - th^2) k (1 + 3 * 0.044715 u^2), each product
// in this order in float32 (the vector kernel bit for bit).
func GELUGradMul(du, u, th []float32) {
	u, th = u[:len(du)], th[:len(du)]
	if n := len(du) &^ 15; haveAsm && n > 0 {
		geluGradMulAsm(du[:n], u[:n], th[:n])
		du, u, th = du[n:], u[n:], th[n:]
	}
	for j, x := range u {
		t := th[j]
		du[j] *= float32(0.5*(1+t)) + float32(float32(float32(float32(0.5*x)*(1-float32(t*t)))*geluK)*(1+float32(float32(3*0.044715*x)*x)))
	}
}

// SiLU sets sg[j] = sigmoid(y[j]) and w[j] = y[j] sg[j], the sigmoid from
// e = exp(-|y|) on the vector exp (never overflows): 1/(1+e) for y >= 0,
// e/(1+e) below; relative error ~4e-7 (TestSiLU).
func SiLU(w, sg, y []float32) {
	w, sg = w[:len(y)], sg[:len(y)]
	n := len(y) &^ 15
	if !haveAsm {
		n = 0
	}
	if n > 0 {
		negAbsAsm(sg[:n], y[:n])
	}
	for j := n; j < len(y); j++ {
		sg[j] = -float32(math.Abs(float64(y[j])))
	}
	ExpShift(sg, 0)
	if n > 0 {
		siluFinishAsm(w[:n], sg[:n], y[:n])
	}
	for j := n; j < len(y); j++ {
		e := sg[j]
		s := 1 / (1 + e)
		if y[j] < 0 {
			s *= e
		}
		sg[j] = s
		w[j] = y[j] * s
	}
}

// SiLUGradMul sets dy[j] *= SiLU'(y[j]) from sg[j] = sigmoid(y[j]):
// sg (1 + y (1 - sg)), in this order in float32.
func SiLUGradMul(dy, y, sg []float32) {
	y, sg = y[:len(dy)], sg[:len(dy)]
	if n := len(dy) &^ 15; haveAsm && n > 0 {
		siluGradMulAsm(dy[:n], y[:n], sg[:n])
		dy, y, sg = dy[n:], y[n:], sg[n:]
	}
	for j, s := range sg {
		dy[j] *= s * (1 + float32(y[j]*(1-s)))
	}
}

package native

// Passes over one score row, for the trainer's softmax and its gradient and
// the evaluator's forgetting gate: scalar Go loops with a float64 cast per
// element cost the PaTH-FoX evaluator half again its attention, and the
// trainer's row loops a tenth of a step. Each takes any length (the
// assembly does the multiples of 16, Go the rest) and does its arithmetic
// in the order its doc gives, so every kernel set gives the same bits
// (products that feed a sum are converted to float32 first: Go may fuse
// them into an FMA on some architectures otherwise).

// ScaleMax sets x[j] *= s and returns the largest result (-Inf for an
// empty x; a NaN may or may not win, the caller's exp spreads it anyway).
func ScaleMax(x []float32, s float32) float32 {
	m := float32(negInf)
	if n := len(x) &^ 15; n > 0 {
		if haveAsm {
			m = scaleMaxAsm(x[:n], s)
		} else {
			m = scaleMaxLanes(x[:n], s)
		}
		x = x[n:]
	}
	for j, v := range x {
		v *= s
		x[j] = v
		if v > m {
			m = v
		}
	}
	return m
}

// Scale sets x[j] *= s.
func Scale(x []float32, s float32) {
	if n := len(x) &^ 15; haveAsm && n > 0 {
		scaleAsm(x[:n], s)
		x = x[n:]
	}
	for j := range x {
		x[j] *= s
	}
}

// AddOffsets adds a + b[j] (that sum first) to x[j]: a per-row and a
// per-column term, as the forgetting gate's G_i - G_j split at a reference
// position.
func AddOffsets(x []float32, a float32, b []float32) {
	b = b[:len(x)]
	if n := len(x) &^ 15; haveAsm && n > 0 {
		addOffsetsAsm(x[:n], a, b[:n])
		x, b = x[n:], b[n:]
	}
	for j := range x {
		x[j] += a + b[j]
	}
}

// Add sets x[j] += y[j].
func Add(x, y []float32) {
	y = y[:len(x)]
	if n := len(x) &^ 15; haveAsm && n > 0 {
		addAsm(x[:n], y[:n])
		x, y = x[n:], y[n:]
	}
	for j := range x {
		x[j] += y[j]
	}
}

// SoftmaxGrad sets ds[j] = p[j] * (ds[j] - rd) * s, left to right: from
// dP to the score gradient of one softmax row (rd = sum_j p_j dP_j, s the
// score scale).
func SoftmaxGrad(ds, p []float32, rd, s float32) {
	p = p[:len(ds)]
	if n := len(ds) &^ 15; haveAsm && n > 0 {
		softmaxGradAsm(ds[:n], p[:n], rd, s)
		ds, p = ds[n:], p[n:]
	}
	for j := range ds {
		ds[j] = p[j] * (ds[j] - rd) * s
	}
}

// Mul sets dst[j] = x[j] * y[j].
func Mul(dst, x, y []float32) {
	x, y = x[:len(dst)], y[:len(dst)]
	if n := len(dst) &^ 15; haveAsm && n > 0 {
		mulAsm(dst[:n], x[:n], y[:n])
		dst, x, y = dst[n:], x[n:], y[n:]
	}
	for j := range dst {
		dst[j] = x[j] * y[j]
	}
}

// AddMul sets dst[j] += a[j] * b[j] (the product first).
func AddMul(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	if n := len(dst) &^ 15; haveAsm && n > 0 {
		addMulAsm(dst[:n], a[:n], b[:n])
		dst, a, b = dst[n:], a[n:], b[n:]
	}
	for j := range dst {
		dst[j] += float32(a[j] * b[j])
	}
}

// NormScale sets nr[j] = x[j] * r and ar[j] = nr[j] * g[j]: one RMSNorm
// row (r its 1/rms) and its gain.
func NormScale(nr, ar, x, g []float32, r float32) {
	ar, x, g = ar[:len(nr)], x[:len(nr)], g[:len(nr)]
	if n := len(nr) &^ 15; haveAsm && n > 0 {
		normScaleAsm(nr[:n], ar[:n], x[:n], g[:n], r)
		nr, ar, x, g = nr[n:], ar[n:], x[n:], g[n:]
	}
	for j, v := range x {
		nr[j] = v * r
		ar[j] = nr[j] * g[j]
	}
}

// NormGrad sets xr[j] = r * (xr[j] - nr[j] * dot), plus res[j] when res is
// not nil: RMSNorm's input gradient from xr = dA * gain, the normed row nr,
// r = 1/rms and dot = xr . nr / D (and the residual's gradient).
func NormGrad(xr, nr, res []float32, r, dot float32) {
	nr = nr[:len(xr)]
	if res != nil {
		res = res[:len(xr)]
	}
	if n := len(xr) &^ 15; haveAsm && n > 0 {
		var rn []float32
		if res != nil {
			rn = res[:n]
			res = res[n:]
		}
		normGradAsm(xr[:n], nr[:n], rn, r, dot)
		xr, nr = xr[n:], nr[n:]
	}
	for j := range xr {
		v := r * (xr[j] - float32(nr[j]*dot))
		if res != nil {
			v += res[j]
		}
		xr[j] = v
	}
}

// RotatePairs turns each pair (u[2e], u[2e+1]) by sign * psi_e, with cos
// and sin holding one value per element, equal on a pair's two elements
// (modelspec.RotationCosSin's layout): u0*c - u1*s, u0*s + u1*c for
// s = sign * sin. len(u) is even.
func RotatePairs(u, cos, sin []float32, sign float32) {
	cos, sin = cos[:len(u)], sin[:len(u)]
	if n := len(u) &^ 15; haveAsm && n > 0 {
		rotPairsAsm(u[:n], cos[:n], sin[:n], sign)
		u, cos, sin = u[n:], cos[n:], sin[n:]
	}
	for e := 0; e+1 < len(u); e += 2 {
		c, s := cos[e], sign*sin[e]
		u0, u1 := u[e], u[e+1]
		u[e], u[e+1] = float32(u0*c)-float32(u1*s), float32(u0*s)+float32(u1*c)
	}
}

// RotateRows sets row r < rows of dst (n floats from dst[r*ldd]) to row r
// of src (from src[r*lds]) with each pair (u0, u1) = (src[2e], src[2e+1])
// turned by the angle whose cos and sin are cs[r*ldc+2e], cs[r*ldc+2e+1]
// (the evaluator's layout) and multiplied by scale: (u0*c - u1*s)*scale,
// (u0*s + u1*c)*scale, the same bits as those expressions in Go. n is
// even; it panics when a row reaches past its slice.
func RotateRows(dst []float32, ldd int, src []float32, lds int, cs []float32, ldc, rows, n int, scale float32) {
	rotateRows(dst, ldd, src, lds, cs, ldc, rows, n, scale, false)
}

// UnrotateRows is RotateRows by the opposite angles: (u0*c + u1*s)*scale,
// (u1*c - u0*s)*scale, the same bits as those expressions in Go (the
// evaluator's value transport turning its outputs back).
func UnrotateRows(dst []float32, ldd int, src []float32, lds int, cs []float32, ldc, rows, n int, scale float32) {
	rotateRows(dst, ldd, src, lds, cs, ldc, rows, n, scale, true)
}

func rotateRows(dst []float32, ldd int, src []float32, lds int, cs []float32, ldc, rows, n int, scale float32, inverse bool) {
	if rows <= 0 || n <= 0 {
		return
	}
	_, _, _ = dst[(rows-1)*ldd+n-1], src[(rows-1)*lds+n-1], cs[(rows-1)*ldc+n-1]
	j0 := 0
	if n16 := n &^ 15; haveAsm && n16 > 0 {
		rotRowsAsm(dst, ldd, src, lds, cs, ldc, rows, n16, scale, inverse)
		j0 = n16
	}
	for r := 0; r < rows; r++ {
		d, x, c := dst[r*ldd:], src[r*lds:], cs[r*ldc:]
		for e := j0; e+1 < n; e += 2 {
			co, si := c[e], c[e+1]
			u0, u1 := x[e], x[e+1]
			if inverse {
				d[e], d[e+1] = (float32(u0*co)+float32(u1*si))*scale, (float32(u1*co)-float32(u0*si))*scale
			} else {
				d[e], d[e+1] = (float32(u0*co)-float32(u1*si))*scale, (float32(u0*si)+float32(u1*co))*scale
			}
		}
	}
}

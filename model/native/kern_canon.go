package native

import "math"

// The canonical float32 operation sequences of the vector kernels, in
// portable Go: what the AVX-512 kernels (kern_amd64.s) compute, lane for
// lane, and the AVX2 kernels (kern_avx2_amd64.s) with two 8-lane halves
// for each 16-lane vector. Without assembly these run in their place, so
// every kernel set gives the same bits (TestKernelSetsBitwise):
//
//   - every multiply-add of a product and a sum is one correctly rounded
//     float32 FMA (fma32);
//   - reductions run over 16 partial sums (lane j%16 of a 16-element
//     chunk), reduced in one tree (hsum16, hmax16) whatever the vector
//     width;
//   - max is the x86 MAXPS rule (maxps), which fixes the result of NaNs and
//     of signed zeros;
//   - 2^n scaling (VSCALEFPS) is one rounding of p * 2^n (scalef).

// fma32 is a*b + c rounded once to float32, as a hardware float32 FMA.
// float32(math.FMA(a, b, c)) would round twice (to float64, then to
// float32) and can differ in rare cases; instead: the float64 product is
// exact (24 + 24 bits), so s = p + c has one rounding, and s rounds to the
// same float32 as the exact sum unless s lies exactly half-way between two
// float32s (or in float32's subnormal range, where the half-way points sit
// elsewhere); only then roundToOdd makes s round-to-odd.
func fma32(a, b, c float32) float32 {
	// The product is exact, so a compiler that fuses this into a float64
	// FMA computes the same s.
	s := float64(a)*float64(b) + float64(c)
	if u := math.Float64bits(s); u&(1<<29-1) == 1<<28 || u&(0x7ff<<52) < (1023-126)<<52 {
		s = roundToOdd(a, b, c)
	}
	return float32(s)
}

// fmaFast reports whether float32(s), s = fl64(a*b + c), is fma32(a, b, c):
// s is no float32 midpoint and not in float32's subnormal range. Small
// enough to inline, so that the portable matrix kernels compute four
// sums, test them, and call fma32 only in the rare case.
func fmaFast(s float64) bool {
	u := math.Float64bits(s)
	return u&(1<<29-1) != 1<<28 && u&(0x7ff<<52) >= (1023-126)<<52
}

// roundToOdd is fl64(a*b + c) made round-to-odd from the sum's exact
// error (TwoSum): a float32 midpoint or a sum in float32's subnormal range
// then rounds correctly to float32 (53 bits >= 24 + 2).
func roundToOdd(a, b, c float32) float64 {
	p, cc := float64(a)*float64(b), float64(c)
	s := p + cc
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return s
	}
	bb := s - p
	e := (p - (s - bb)) + (cc - bb)
	if bits := math.Float64bits(s); e != 0 && bits&1 == 0 {
		if (e > 0) == (s > 0) {
			bits++ // away from zero, towards e
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return s
}

// fma32Double is the tempting shortcut that rounds twice: kept for
// TestFMA32, which shows it differ from the exact FMA on midpoint cases.
func fma32Double(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// maxps is x86 MAXPS of one lane: a unless b is at least as large, so a
// NaN in either operand, or two zeros, give b.
func maxps(a, b float32) float32 {
	if a > b {
		return a
	}
	return b
}

// minps is x86 MINPS of one lane: a if a < b, else b.
func minps(a, b float32) float32 {
	if a < b {
		return a
	}
	return b
}

// roundEven is VRNDSCALEPS/VROUNDPS with imm 0: to the nearest integer,
// ties to even.
func roundEven(t float32) float32 { return float32(math.RoundToEven(float64(t))) }

// scalef is VSCALEFPS for an integral n: p * 2^n rounded once (the
// float64 product is exact, its conversion the one rounding, subnormal
// results included).
func scalef(p, n float32) float32 {
	if p != p {
		return p
	}
	n = max(min(n, 400), -400) // beyond, the result is 0 or Inf either way
	return float32(math.Ldexp(float64(p), int(n)))
}

// mutateHsum, for tests only, reorders hsum16 into a left-to-right sum:
// the mutation that TestKernelSetsBitwise must reject.
var mutateHsum bool

// hsum16 is the horizontal sum of a 16-lane vector: the upper 8 lanes onto
// the lower, then the upper 4 onto the lower 4, then two pairwise adds
// (VHADDPS), as the assembly's tree.
func hsum16(l *[16]float32) float32 {
	if mutateHsum {
		var s float32
		for _, v := range l {
			s += v
		}
		return s
	}
	var y [8]float32
	for i := range y {
		y[i] = l[i] + l[i+8]
	}
	x0, x1, x2, x3 := y[0]+y[4], y[1]+y[5], y[2]+y[6], y[3]+y[7]
	return (x0 + x1) + (x2 + x3)
}

// hmax16 is the horizontal MAXPS of a 16-lane vector in the assembly's
// order (lower half first in every step).
func hmax16(l *[16]float32) float32 {
	var y [8]float32
	for i := range y {
		y[i] = maxps(l[i], l[i+8])
	}
	x0, x1, x2, x3 := maxps(y[0], y[4]), maxps(y[1], y[5]), maxps(y[2], y[6]), maxps(y[3], y[7])
	x0, x1 = maxps(x0, x2), maxps(x1, x3)
	return maxps(x0, x1)
}

// expConsts: the exp of expShift, GELU and the rescale factors (Cephes'
// expf, exp(v) = 2^n exp(r), r = v - n ln2 in two parts, 1 + r + r^2 (p5 +
// r (p4 + ...)) as one Horner chain of FMAs). The vector forms clamp at
// -120 instead of masking lanes below expLo: 2^-173 underflows to an exact
// 0 (so do -Inf scores), and arguments in (-104, -87) give values under
// 1.7e-38, invisible beside a softmax sum >= 1.
var expConsts = [12]float32{-120, expLog2e, -expC1, -expC2, expP0, expP1, expP2, expP3, expP4, expP5, 1, 0}

// expPolyLane is the vector kernels' Cephes exp of one lane that has been
// clamped: n = round(v log2e), r = v - n c1 - n c2, p = the Horner chain,
// then p 2^n.
func expPolyLane(v float32, c *[12]float32) float32 {
	n := roundEven(v * c[1])
	r := fma32(n, c[2], v)
	r = fma32(n, c[3], r)
	p := c[4]
	for i := 5; i <= 9; i++ {
		p = fma32(r, p, c[i])
	}
	p = fma32(r, p, c[10])
	p = fma32(r, p, c[10])
	return scalef(p, n)
}

// expShiftLanes is expShiftAVX512: x[j] = exp(max(x[j]-m, -120)), summed
// in 16 lanes. len(x) is a multiple of 16.
func expShiftLanes(x []float32, m float32) float32 {
	var acc [16]float32
	for j := 0; j+16 <= len(x); j += 16 {
		for i := range 16 {
			e := expPolyLane(maxps(x[j+i]-m, expConsts[0]), &expConsts)
			x[j+i] = e
			acc[i] += e
		}
	}
	return hsum16(&acc)
}

// maxLanes is maxAVX512: MAXPS into 16 lanes from -Inf, then hmax16.
func maxLanes(x []float32) float32 {
	var acc [16]float32
	for i := range acc {
		acc[i] = float32(negInf)
	}
	for j := 0; j+16 <= len(x); j += 16 {
		for i := range 16 {
			acc[i] = maxps(acc[i], x[j+i])
		}
	}
	return hmax16(&acc)
}

// rampLanes is rampAVX512: lane i holds base + i, then steps by 16; each
// element gets x + slope * that.
func rampLanes(x []float32, base, slope float32) {
	var b [16]float32
	for i := range b {
		b[i] = base + float32(i)
	}
	for j := 0; j+16 <= len(x); j += 16 {
		for i := range 16 {
			x[j+i] = x[j+i] + float32(slope*b[i])
			b[i] += 16
		}
	}
}

// geluConsts: 2k, 2k*0.044715, the clamp 18 and -18 of 2z, then
// expConsts' log2e, -c1, -c2, p0..p5, 1, and (GELUTanh's) 2 and 0.5.
var geluConsts = [16]float32{2 * geluK, 2 * geluK * 0.044715, 18, -18, expLog2e, -expC1, -expC2,
	expP0, expP1, expP2, expP3, expP4, expP5, 1, 2, 0.5}

// geluExp2z is exp(2z) of the vector GELUs for one lane u: 2z = (2k c u^2
// + 2k) u clamped to [-18, 18], then the exp of expPolyLane.
func geluExp2z(u float32) float32 {
	c := &geluConsts
	z := fma32(u*u, c[1], c[0]) * u
	z = maxps(minps(z, c[2]), c[3])
	e := [12]float32{0, c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13]}
	return expPolyLane(z, &e)
}

// geluLanes is geluAVX512 on the largest multiple of 16 of x (u - u /
// (exp(2z) + 1)) and returns how many it did.
func geluLanes(x []float32) int {
	n := len(x) &^ 15
	for j, u := range x[:n] {
		x[j] = u - u/(geluExp2z(u)+1)
	}
	return n
}

// geluTanhLanes is geluTanhAVX512 on the largest multiple of 16: u +=
// bias, th = 1 - 2/(exp(2z) + 1), g = ((1 + th) u) 0.5; it returns how
// many it did.
func geluTanhLanes(u, bias, th, g []float32) int {
	n := len(u) &^ 15
	for j := range n {
		x := u[j]
		if bias != nil {
			x += bias[j]
			u[j] = x
		}
		t := 1 - 2/(geluExp2z(x)+1)
		th[j] = t
		g[j] = (1 + t) * x * 0.5
	}
	return n
}

// scaleMaxLanes is scaleMaxAVX512: x[j] *= s, the results' MAXPS in 16
// lanes from -Inf, then hmax16. len(x) is a multiple of 16.
func scaleMaxLanes(x []float32, s float32) float32 {
	var acc [16]float32
	for i := range acc {
		acc[i] = float32(negInf)
	}
	for j := 0; j+16 <= len(x); j += 16 {
		for i := range 16 {
			v := x[j+i] * s
			x[j+i] = v
			acc[i] = maxps(acc[i], v)
		}
	}
	return hmax16(&acc)
}

// softmaxExpConsts: the online softmax's exp (softmaxExpSteps in
// gen_kern_amd64.go): the clamp lo, log2e, then c6..c0 of 2^r on
// [-1/2, 1/2], a Remez (minimax relative error) fit, 1.3 ulp evaluated in
// float32 by Horner's rule with FMAs; c0 = 1 exactly, so exp(0) = 1; then
// nmin, the least power of two kept (lanes below it give an exact 0).
// lo = -87.2 keeps every lane's 2^t a normal float32 (t >= -125.8), so
// the kernel never makes a denormal: unlike expConsts' -120, since under
// a forgetting gate half of the probabilities are that small.
var softmaxExpConsts = [12]float32{-87.2, expLog2e,
	1.534732000e-04, 1.340015442e-03, 9.618484415e-03, 5.550327897e-02, 2.402264625e-01, 6.931471825e-01, 1,
	-125}

// softmaxExpLane is one lane of softmaxExpSteps: t = max(v, lo) log2e,
// n = round(t), 2^(t-n) by the Horner chain, times 2^n where n >= nmin,
// else an exact 0.
func softmaxExpLane(v float32) float32 {
	c := &softmaxExpConsts
	t := maxps(v, c[0]) * c[1]
	n := roundEven(t)
	r := t - n
	p := c[2]
	for k := 3; k <= 8; k++ {
		p = fma32(r, p, c[k])
	}
	if !(n >= c[9]) {
		return 0
	}
	return scalef(p, n)
}

// softmaxRowsLanes is softmaxRows{,Ent}{,Off}AVX512 for nq rows of 64
// scores: (with offsets, s += a[r] + b[j] first) the row max m_new =
// MAXPS(row's hmax, m[r]) with the row's four 16-lane vectors reduced
// (v0 v1) (v2 v3); d[r] = m[r] - m_new; each score becomes e =
// softmaxExpLane(s - m_new); rs[r] = hsum16 of (e0 + e1) + (e2 + e3); with
// ent, ent[r] = hsum16 of e0 t0, then FMAs of e1 t1 .. e3 t3, t =
// max(s - m_new, lo).
func softmaxRowsLanes(s []float32, nq int, m, rs, d, ent, a, b []float32) {
	lo := softmaxExpConsts[0]
	for r := range nq {
		row := (*[64]float32)(s[r*64:])
		if a != nil {
			for j := range 64 {
				row[j] = row[j] + (a[r] + b[j])
			}
		}
		var mx [16]float32
		for i := range 16 {
			mx[i] = maxps(maxps(row[i], row[16+i]), maxps(row[32+i], row[48+i]))
		}
		mNew := maxps(hmax16(&mx), m[r])
		d[r] = m[r] - mNew
		m[r] = mNew
		var sum, en [16]float32
		for i := range 16 {
			var e [4]float32
			for v := range 4 {
				x := row[16*v+i] - mNew
				e[v] = softmaxExpLane(x)
				row[16*v+i] = e[v]
				if ent != nil {
					t := maxps(x, lo)
					if v == 0 {
						en[i] = e[v] * t
					} else {
						en[i] = fma32(e[v], t, en[i])
					}
				}
			}
			sum[i] = (e[0] + e[1]) + (e[2] + e[3])
		}
		rs[r] = hsum16(&sum)
		if ent != nil {
			ent[r] = hsum16(&en)
		}
	}
}

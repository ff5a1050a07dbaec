package native

import "math"

// Portable micro-kernels: plain Go, each output the same chain of float32
// FMAs (fma32) as the vector kernels' (kern_canon.go says the rules), so
// that every kernel set gives the same bits. The inner loops inline
// fma32's common case (fmaFast) four sums at a time: a call per FMA made
// them 6-20x slower than the former unfused loops.

// qkBlockGeneric is the portable QK block: each score one chain of FMAs
// over c from +0, as the assembly's modeSet tiles (4 x 4 register tiles so
// that the compiler keeps the partial sums in registers).
func qkBlockGeneric(s, q, kt []float32, nq, d, bk int) {
	for i := 0; i < nq; i++ {
		qi := q[i*d : i*d+d]
		si := s[i*bk : i*bk+bk]
		j := 0
		for ; j+4 <= bk; j += 4 {
			var a0, a1, a2, a3 float32
			for c, x := range qi {
				k := kt[c*bk+j : c*bk+j+4 : c*bk+j+4]
				x64 := float64(x)
				s0, s1, s2, s3 := x64*float64(k[0])+float64(a0), x64*float64(k[1])+float64(a1), x64*float64(k[2])+float64(a2), x64*float64(k[3])+float64(a3)
				if fmaFast(s0) && fmaFast(s1) && fmaFast(s2) && fmaFast(s3) {
					a0, a1, a2, a3 = float32(s0), float32(s1), float32(s2), float32(s3)
				} else {
					a0, a1, a2, a3 = fma32(x, k[0], a0), fma32(x, k[1], a1), fma32(x, k[2], a2), fma32(x, k[3], a3)
				}
			}
			si[j], si[j+1], si[j+2], si[j+3] = a0, a1, a2, a3
		}
		for ; j < bk; j++ {
			var a float32
			for c, x := range qi {
				a = fma32(x, kt[c*bk+j], a)
			}
			si[j] = a
		}
	}
}

// pvBlockGeneric is the portable PV block: each output continues from o
// with one FMA per key, in key order, as the assembly's modeAcc tiles.
func pvBlockGeneric(o, p, v []float32, nq, d, bk, nk int) {
	for i := 0; i < nq; i++ {
		pi := p[i*bk : i*bk+nk]
		oi := o[i*d : i*d+d]
		c := 0
		for ; c+4 <= d; c += 4 {
			a0, a1, a2, a3 := oi[c], oi[c+1], oi[c+2], oi[c+3]
			for j, x := range pi {
				w := v[j*d+c : j*d+c+4 : j*d+c+4]
				x64 := float64(x)
				s0, s1, s2, s3 := x64*float64(w[0])+float64(a0), x64*float64(w[1])+float64(a1), x64*float64(w[2])+float64(a2), x64*float64(w[3])+float64(a3)
				if fmaFast(s0) && fmaFast(s1) && fmaFast(s2) && fmaFast(s3) {
					a0, a1, a2, a3 = float32(s0), float32(s1), float32(s2), float32(s3)
				} else {
					a0, a1, a2, a3 = fma32(x, w[0], a0), fma32(x, w[1], a1), fma32(x, w[2], a2), fma32(x, w[3], a3)
				}
			}
			oi[c], oi[c+1], oi[c+2], oi[c+3] = a0, a1, a2, a3
		}
		for ; c < d; c++ {
			a := oi[c]
			for j, x := range pi {
				a = fma32(x, v[j*d+c], a)
			}
			oi[c] = a
		}
	}
}

// Cephes expf: exp(x) = 2^n exp(r), |r| <= ln2/2, with ln2 split in two
// parts so that r is exact, and a degree-7 polynomial (~1 ulp).
const (
	expLog2e = 1.44269504088896341
	expC1    = 0.693359375
	expC2    = -2.12194440e-4
	expP0    = 1.9875691500e-4
	expP1    = 1.3981999507e-3
	expP2    = 8.3334519073e-3
	expP3    = 4.1665795894e-2
	expP4    = 1.6666665459e-1
	expP5    = 5.0000001201e-1
	expLo    = -87.0 // below this exp gives 0: far under float32 precision of a softmax sum >= 1
	expHi    = 88.0
)

// fastExp is the scalar exp of ExpShift's remainder (len not a multiple
// of 16) in every kernel set: Cephes' polynomial, each product rounded on
// its own (the float32 conversions forbid fusing on the architectures
// whose compilers would).
func fastExp(x float32) float32 {
	if !(x >= expLo) { // also NaN and -Inf
		return 0
	}
	if x > expHi {
		x = expHi
	}
	n := float32(math.RoundToEven(float64(x * expLog2e)))
	r := x - float32(n*expC1)
	r -= float32(n * expC2)
	p := float32(expP0)
	p = float32(p*r) + expP1
	p = float32(p*r) + expP2
	p = float32(p*r) + expP3
	p = float32(p*r) + expP4
	p = float32(p*r) + expP5
	p = float32(float32(p*r)*r) + r + 1
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// expShiftGeneric is ExpShift's remainder: fastExp, summed in order.
func expShiftGeneric(x []float32, m float32) float32 {
	var s float32
	for j, v := range x {
		e := fastExp(v - m)
		x[j] = e
		s += e
	}
	return s
}

// gemmPanelGeneric is the portable packed-panel product: each element of
// C one chain of FMAs over k, from +0 or (acc) from C itself, as the
// assembly's tiles.
func gemmPanelGeneric(c []float32, ldc int, a []float32, lda int, bp []float32, m, k, nc int, acc bool) {
	const nr = panelWidth
	for i := 0; i < m; i++ {
		ar := a[i*lda : i*lda+k]
		cr := c[i*ldc : i*ldc+nc]
		j := 0
		for ; j+4 <= nc; j += 4 {
			var a0, a1, a2, a3 float32
			if acc {
				a0, a1, a2, a3 = cr[j], cr[j+1], cr[j+2], cr[j+3]
			}
			for kk, x := range ar {
				b := bp[kk*nr+j : kk*nr+j+4 : kk*nr+j+4]
				x64 := float64(x)
				s0, s1, s2, s3 := x64*float64(b[0])+float64(a0), x64*float64(b[1])+float64(a1), x64*float64(b[2])+float64(a2), x64*float64(b[3])+float64(a3)
				if fmaFast(s0) && fmaFast(s1) && fmaFast(s2) && fmaFast(s3) {
					a0, a1, a2, a3 = float32(s0), float32(s1), float32(s2), float32(s3)
				} else {
					a0, a1, a2, a3 = fma32(x, b[0], a0), fma32(x, b[1], a1), fma32(x, b[2], a2), fma32(x, b[3], a3)
				}
			}
			cr[j], cr[j+1], cr[j+2], cr[j+3] = a0, a1, a2, a3
		}
		for ; j < nc; j++ {
			var a0 float32
			if acc {
				a0 = cr[j]
			}
			for kk, x := range ar {
				a0 = fma32(x, bp[kk*nr+j], a0)
			}
			cr[j] = a0
		}
	}
}

const geluK = 0.7978845608028654 // sqrt(2/pi)

func geluScalar(u float32) float32 {
	v := float64(u)
	return float32(0.5 * v * (1 + math.Tanh(geluK*(v+0.044715*v*v*v))))
}

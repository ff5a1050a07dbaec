package native

import "math"

// Portable micro-kernels: plain Go with 4-row register tiles so that the
// compiler keeps partial sums in registers. They define the semantics that
// the vector kernels must match.

func qkBlockGeneric(s, q, kt []float32, nq, d, bk int) {
	i := 0
	for ; i+4 <= nq; i += 4 {
		q0, q1, q2, q3 := q[i*d:i*d+d], q[(i+1)*d:(i+1)*d+d], q[(i+2)*d:(i+2)*d+d], q[(i+3)*d:(i+3)*d+d]
		s0, s1, s2, s3 := s[i*bk:i*bk+bk], s[(i+1)*bk:(i+1)*bk+bk], s[(i+2)*bk:(i+2)*bk+bk], s[(i+3)*bk:(i+3)*bk+bk]
		for j := 0; j+4 <= bk; j += 4 {
			var a00, a01, a02, a03, a10, a11, a12, a13 float32
			var a20, a21, a22, a23, a30, a31, a32, a33 float32
			for c := 0; c < d; c++ {
				k := kt[c*bk+j : c*bk+j+4 : c*bk+j+4]
				k0, k1, k2, k3 := k[0], k[1], k[2], k[3]
				x := q0[c]
				a00 += x * k0
				a01 += x * k1
				a02 += x * k2
				a03 += x * k3
				x = q1[c]
				a10 += x * k0
				a11 += x * k1
				a12 += x * k2
				a13 += x * k3
				x = q2[c]
				a20 += x * k0
				a21 += x * k1
				a22 += x * k2
				a23 += x * k3
				x = q3[c]
				a30 += x * k0
				a31 += x * k1
				a32 += x * k2
				a33 += x * k3
			}
			s0[j], s0[j+1], s0[j+2], s0[j+3] = a00, a01, a02, a03
			s1[j], s1[j+1], s1[j+2], s1[j+3] = a10, a11, a12, a13
			s2[j], s2[j+1], s2[j+2], s2[j+3] = a20, a21, a22, a23
			s3[j], s3[j+1], s3[j+2], s3[j+3] = a30, a31, a32, a33
		}
	}
	for ; i < nq; i++ {
		qi := q[i*d : i*d+d]
		si := s[i*bk : i*bk+bk]
		for j := range si {
			var a float32
			for c, x := range qi {
				a += x * kt[c*bk+j]
			}
			si[j] = a
		}
	}
}

func pvBlockGeneric(o, p, v []float32, nq, d, bk, nk int) {
	i := 0
	for ; i+4 <= nq; i += 4 {
		p0, p1, p2, p3 := p[i*bk:i*bk+nk], p[(i+1)*bk:(i+1)*bk+nk], p[(i+2)*bk:(i+2)*bk+nk], p[(i+3)*bk:(i+3)*bk+nk]
		o0, o1, o2, o3 := o[i*d:i*d+d], o[(i+1)*d:(i+1)*d+d], o[(i+2)*d:(i+2)*d+d], o[(i+3)*d:(i+3)*d+d]
		for c := 0; c+2 <= d; c += 2 {
			var a00, a01, a10, a11, a20, a21, a30, a31 float32
			for j := 0; j < nk; j++ {
				v0, v1 := v[j*d+c], v[j*d+c+1]
				x := p0[j]
				a00 += x * v0
				a01 += x * v1
				x = p1[j]
				a10 += x * v0
				a11 += x * v1
				x = p2[j]
				a20 += x * v0
				a21 += x * v1
				x = p3[j]
				a30 += x * v0
				a31 += x * v1
			}
			o0[c] += a00
			o0[c+1] += a01
			o1[c] += a10
			o1[c+1] += a11
			o2[c] += a20
			o2[c+1] += a21
			o3[c] += a30
			o3[c+1] += a31
		}
	}
	for ; i < nq; i++ {
		pi := p[i*bk : i*bk+nk]
		oi := o[i*d : i*d+d]
		for c := range oi {
			var a float32
			for j, x := range pi {
				a += x * v[j*d+c]
			}
			oi[c] += a
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

// fastExp is the scalar twin of the vector exp (same polynomial).
func fastExp(x float32) float32 {
	if !(x >= expLo) { // also NaN and -Inf
		return 0
	}
	if x > expHi {
		x = expHi
	}
	n := float32(math.RoundToEven(float64(x * expLog2e)))
	r := x - n*expC1
	r -= n * expC2
	p := float32(expP0)
	p = p*r + expP1
	p = p*r + expP2
	p = p*r + expP3
	p = p*r + expP4
	p = p*r + expP5
	p = p*r*r + r + 1
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

func expShiftGeneric(x []float32, m float32) float32 {
	var s float32
	for j, v := range x {
		e := fastExp(v - m)
		x[j] = e
		s += e
	}
	return s
}

func maxOfGeneric(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	return m
}

func gemmPanelGeneric(c []float32, ldc int, a []float32, lda int, bp []float32, m, k, nc int, acc bool) {
	const nr = panelWidth
	var tile [4 * nr]float32
	i := 0
	for ; i < m; i += 4 {
		mr := min(4, m-i)
		for t := range tile {
			tile[t] = 0
		}
		for j := 0; j < nr; j += 4 {
			var a00, a01, a02, a03, a10, a11, a12, a13 float32
			var a20, a21, a22, a23, a30, a31, a32, a33 float32
			r0 := a[i*lda : i*lda+k]
			r1, r2, r3 := r0, r0, r0
			if mr > 1 {
				r1 = a[(i+1)*lda : (i+1)*lda+k]
			}
			if mr > 2 {
				r2 = a[(i+2)*lda : (i+2)*lda+k]
			}
			if mr > 3 {
				r3 = a[(i+3)*lda : (i+3)*lda+k]
			}
			for kk := 0; kk < k; kk++ {
				b := bp[kk*nr+j : kk*nr+j+4 : kk*nr+j+4]
				b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
				x := r0[kk]
				a00 += x * b0
				a01 += x * b1
				a02 += x * b2
				a03 += x * b3
				x = r1[kk]
				a10 += x * b0
				a11 += x * b1
				a12 += x * b2
				a13 += x * b3
				x = r2[kk]
				a20 += x * b0
				a21 += x * b1
				a22 += x * b2
				a23 += x * b3
				x = r3[kk]
				a30 += x * b0
				a31 += x * b1
				a32 += x * b2
				a33 += x * b3
			}
			tile[j], tile[j+1], tile[j+2], tile[j+3] = a00, a01, a02, a03
			tile[nr+j], tile[nr+j+1], tile[nr+j+2], tile[nr+j+3] = a10, a11, a12, a13
			tile[2*nr+j], tile[2*nr+j+1], tile[2*nr+j+2], tile[2*nr+j+3] = a20, a21, a22, a23
			tile[3*nr+j], tile[3*nr+j+1], tile[3*nr+j+2], tile[3*nr+j+3] = a30, a31, a32, a33
		}
		storeTile(c, ldc, tile[:], i, mr, nc, acc)
	}
}

// storeTile writes (or adds) the first mr rows and nc columns of a
// 4 x panelWidth tile at row i of c.
func storeTile(c []float32, ldc int, tile []float32, i, mr, nc int, acc bool) {
	for r := 0; r < mr; r++ {
		dst := c[(i+r)*ldc : (i+r)*ldc+nc]
		src := tile[r*panelWidth : r*panelWidth+nc]
		if acc {
			for j, v := range src {
				dst[j] += v
			}
		} else {
			copy(dst, src)
		}
	}
}

const geluK = 0.7978845608028654 // sqrt(2/pi)

func geluScalar(u float32) float32 {
	v := float64(u)
	return float32(0.5 * v * (1 + math.Tanh(geluK*(v+0.044715*v*v*v))))
}

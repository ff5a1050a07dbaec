//go:build goexperiment.simd && amd64

package native

import (
	"math"
	"simd/archsimd"
)

// Vector micro-kernels on 16-wide float32 (AVX-512) through Go 1.26's
// experimental simd/archsimd. Register tiles are 4 rows x 2 vectors: Go's register allocator
// uses X0-X14 only (not the 32 registers AVX-512 has), and 4x4 tiles spilled
// every accumulator to the stack (25 GFLOP/s per core for QK^T).

type f32x16 = archsimd.Float32x16

func simdAvailable() bool { return archsimd.X86.AVX512() }

func bcast(x float32) f32x16 { return archsimd.BroadcastFloat32x16(x) }

func load(s []float32) f32x16 { return archsimd.LoadFloat32x16Slice(s) }

func qkBlockSIMD(s, q, kt []float32, nq, d, bk int) {
	i := 0
	for ; i+4 <= nq; i += 4 {
		q0, q1, q2, q3 := q[i*d:i*d+d], q[(i+1)*d:(i+1)*d+d], q[(i+2)*d:(i+2)*d+d], q[(i+3)*d:(i+3)*d+d]
		j := 0
		for ; j+32 <= bk; j += 32 {
			var a00, a01, a10, a11, a20, a21, a30, a31 f32x16
			for c := 0; c < d; c++ {
				k := kt[c*bk+j : c*bk+j+32 : c*bk+j+32]
				k0, k1 := load(k[0:16]), load(k[16:32])
				x := bcast(q0[c])
				a00 = x.MulAdd(k0, a00)
				a01 = x.MulAdd(k1, a01)
				x = bcast(q1[c])
				a10 = x.MulAdd(k0, a10)
				a11 = x.MulAdd(k1, a11)
				x = bcast(q2[c])
				a20 = x.MulAdd(k0, a20)
				a21 = x.MulAdd(k1, a21)
				x = bcast(q3[c])
				a30 = x.MulAdd(k0, a30)
				a31 = x.MulAdd(k1, a31)
			}
			a00.StoreSlice(s[i*bk+j:])
			a01.StoreSlice(s[i*bk+j+16:])
			a10.StoreSlice(s[(i+1)*bk+j:])
			a11.StoreSlice(s[(i+1)*bk+j+16:])
			a20.StoreSlice(s[(i+2)*bk+j:])
			a21.StoreSlice(s[(i+2)*bk+j+16:])
			a30.StoreSlice(s[(i+3)*bk+j:])
			a31.StoreSlice(s[(i+3)*bk+j+16:])
		}
		for ; j < bk; j += 16 {
			var a0, a1, a2, a3 f32x16
			for c := 0; c < d; c++ {
				k := load(kt[c*bk+j : c*bk+j+16])
				a0 = bcast(q0[c]).MulAdd(k, a0)
				a1 = bcast(q1[c]).MulAdd(k, a1)
				a2 = bcast(q2[c]).MulAdd(k, a2)
				a3 = bcast(q3[c]).MulAdd(k, a3)
			}
			a0.StoreSlice(s[i*bk+j:])
			a1.StoreSlice(s[(i+1)*bk+j:])
			a2.StoreSlice(s[(i+2)*bk+j:])
			a3.StoreSlice(s[(i+3)*bk+j:])
		}
	}
	for ; i < nq; i++ {
		qi := q[i*d : i*d+d]
		for j := 0; j < bk; j += 16 {
			var a f32x16
			for c, x := range qi {
				a = bcast(x).MulAdd(load(kt[c*bk+j:c*bk+j+16]), a)
			}
			a.StoreSlice(s[i*bk+j:])
		}
	}
}

func pvBlockSIMD(o, p, v []float32, nq, d, bk, nk int) {
	i := 0
	for ; i+4 <= nq; i += 4 {
		c := 0
		for ; c+32 <= d; c += 32 {
			pv4x2(o[i*d+c:], p[i*bk:], v[c:], d, bk, nk)
		}
		for ; c < d; c += 16 {
			pv4x1(o[i*d+c:], p[i*bk:], v[c:], d, bk, nk)
		}
	}
	for ; i < nq; i++ {
		pi := p[i*bk : i*bk+nk]
		for c := 0; c < d; c += 16 {
			a := load(o[i*d+c:])
			for j, x := range pi {
				a = bcast(x).MulAdd(load(v[j*d+c:]), a)
			}
			a.StoreSlice(o[i*d+c:])
		}
	}
}

// pv4x2 handles 4 query rows and 32 output columns: o rows start at o[r*d],
// p rows at p[r*bk], value rows at v[j*d]. 8 accumulators + 2 value vectors
// + 1 broadcast: Go's register allocator uses only X0-X14, so larger tiles
// spill.
func pv4x2(o, p, v []float32, d, bk, nk int) {
	a00, a01 := load(o[0:]), load(o[16:])
	a10, a11 := load(o[d:]), load(o[d+16:])
	a20, a21 := load(o[2*d:]), load(o[2*d+16:])
	a30, a31 := load(o[3*d:]), load(o[3*d+16:])
	p0, p1, p2, p3 := p[0:nk], p[bk:bk+nk], p[2*bk:2*bk+nk], p[3*bk:3*bk+nk]
	for j := 0; j < nk; j++ {
		vr := v[j*d : j*d+32 : j*d+32]
		v0, v1 := load(vr[0:16]), load(vr[16:32])
		x := bcast(p0[j])
		a00 = x.MulAdd(v0, a00)
		a01 = x.MulAdd(v1, a01)
		x = bcast(p1[j])
		a10 = x.MulAdd(v0, a10)
		a11 = x.MulAdd(v1, a11)
		x = bcast(p2[j])
		a20 = x.MulAdd(v0, a20)
		a21 = x.MulAdd(v1, a21)
		x = bcast(p3[j])
		a30 = x.MulAdd(v0, a30)
		a31 = x.MulAdd(v1, a31)
	}
	a00.StoreSlice(o[0:])
	a01.StoreSlice(o[16:])
	a10.StoreSlice(o[d:])
	a11.StoreSlice(o[d+16:])
	a20.StoreSlice(o[2*d:])
	a21.StoreSlice(o[2*d+16:])
	a30.StoreSlice(o[3*d:])
	a31.StoreSlice(o[3*d+16:])
}

func pv4x1(o, p, v []float32, d, bk, nk int) {
	a0, a1, a2, a3 := load(o[0:]), load(o[d:]), load(o[2*d:]), load(o[3*d:])
	p0, p1, p2, p3 := p[0:nk], p[bk:bk+nk], p[2*bk:2*bk+nk], p[3*bk:3*bk+nk]
	for j := 0; j < nk; j++ {
		v0 := load(v[j*d:])
		a0 = bcast(p0[j]).MulAdd(v0, a0)
		a1 = bcast(p1[j]).MulAdd(v0, a1)
		a2 = bcast(p2[j]).MulAdd(v0, a2)
		a3 = bcast(p3[j]).MulAdd(v0, a3)
	}
	a0.StoreSlice(o[0:])
	a1.StoreSlice(o[d:])
	a2.StoreSlice(o[2*d:])
	a3.StoreSlice(o[3*d:])
}

func expShiftSIMD(x []float32, m float32) float32 {
	var (
		mv    = bcast(m)
		lo    = bcast(expLo)
		hi    = bcast(expHi)
		l2e   = bcast(expLog2e)
		c1    = bcast(-expC1)
		c2    = bcast(-expC2)
		k0    = bcast(expP0)
		k1    = bcast(expP1)
		k2    = bcast(expP2)
		k3    = bcast(expP3)
		k4    = bcast(expP4)
		k5    = bcast(expP5)
		one   = bcast(1)
		zero  f32x16
		total f32x16
	)
	for j := 0; j+16 <= len(x); j += 16 {
		v := load(x[j:]).Sub(mv)
		dead := v.Less(lo) // includes -Inf; NaN compares false and propagates
		v = v.Min(hi).Max(lo)
		n := v.Mul(l2e).RoundToEvenScaled(0)
		r := n.MulAdd(c1, v)
		r = n.MulAdd(c2, r)
		p := k0.MulAdd(r, k1)
		p = p.MulAdd(r, k2)
		p = p.MulAdd(r, k3)
		p = p.MulAdd(r, k4)
		p = p.MulAdd(r, k5)
		p = p.Mul(r.Mul(r)).Add(r).Add(one)
		e := zero.Merge(p.Scale(n), dead)
		e.StoreSlice(x[j:])
		total = total.Add(e)
	}
	return hsum(total)
}

func hsum(v f32x16) float32 {
	var t [16]float32
	v.Store(&t)
	var s float32
	for _, x := range t {
		s += x
	}
	return s
}

func maxOfSIMD(x []float32) float32 {
	mx := bcast(float32(math.Inf(-1)))
	for j := 0; j+16 <= len(x); j += 16 {
		mx = mx.Max(load(x[j:]))
	}
	var t [16]float32
	mx.Store(&t)
	m := t[0]
	for _, v := range t[1:] {
		if v > m {
			m = v
		}
	}
	return m
}

func gemmPanelSIMD(c []float32, ldc int, a []float32, lda int, bp []float32, m, k, nc int, acc bool) {
	const nr = panelWidth
	var tile [4 * nr]float32
	for i := 0; i < m; i += 4 {
		mr := min(4, m-i)
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
		for h := 0; h < nr && h < nc; h += 32 {
			var a00, a01, a10, a11, a20, a21, a30, a31 f32x16
			for kk := 0; kk < k; kk++ {
				b := bp[kk*nr+h : kk*nr+h+32 : kk*nr+h+32]
				b0, b1 := load(b[0:16]), load(b[16:32])
				x := bcast(r0[kk])
				a00 = x.MulAdd(b0, a00)
				a01 = x.MulAdd(b1, a01)
				x = bcast(r1[kk])
				a10 = x.MulAdd(b0, a10)
				a11 = x.MulAdd(b1, a11)
				x = bcast(r2[kk])
				a20 = x.MulAdd(b0, a20)
				a21 = x.MulAdd(b1, a21)
				x = bcast(r3[kk])
				a30 = x.MulAdd(b0, a30)
				a31 = x.MulAdd(b1, a31)
			}
			t := tile[h:]
			a00.StoreSlice(t[0:])
			a01.StoreSlice(t[16:])
			a10.StoreSlice(t[nr:])
			a11.StoreSlice(t[nr+16:])
			a20.StoreSlice(t[2*nr:])
			a21.StoreSlice(t[2*nr+16:])
			a30.StoreSlice(t[3*nr:])
			a31.StoreSlice(t[3*nr+16:])
		}
		storeTile(c, ldc, tile[:], i, mr, nc, acc)
	}
}

var iota16 = [16]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

func addRampSIMD(x []float32, base, slope float32) {
	idx := archsimd.LoadFloat32x16(&iota16).Add(bcast(base))
	sl, step := bcast(slope), bcast(16)
	for j := 0; j+16 <= len(x); j += 16 {
		load(x[j:]).Add(idx.Mul(sl)).StoreSlice(x[j:])
		idx = idx.Add(step)
	}
}

// geluSIMD: 0.5 u (1 + tanh z) = u - u / (exp(2z) + 1), with z clamped to
// |z| <= 9 where tanh is +-1 in float32; exp as in expShiftSIMD.
func geluSIMD(x []float32) {
	var (
		k    = bcast(2 * geluK)
		k3   = bcast(2 * geluK * 0.044715)
		lim  = bcast(18)
		nlim = bcast(-18)
		l2e  = bcast(expLog2e)
		c1   = bcast(-expC1)
		c2   = bcast(-expC2)
		one  = bcast(1)
	)
	for j := 0; j+16 <= len(x); j += 16 {
		u := load(x[j:])
		z2 := u.Mul(u).MulAdd(k3, k).Mul(u).Min(lim).Max(nlim) // 2z
		n := z2.Mul(l2e).RoundToEvenScaled(0)
		r := n.MulAdd(c1, z2)
		r = n.MulAdd(c2, r)
		p := bcast(expP0).MulAdd(r, bcast(expP1))
		p = p.MulAdd(r, bcast(expP2))
		p = p.MulAdd(r, bcast(expP3))
		p = p.MulAdd(r, bcast(expP4))
		p = p.MulAdd(r, bcast(expP5))
		e := p.Mul(r.Mul(r)).Add(r).Add(one).Scale(n)
		u.Sub(u.Div(e.Add(one))).StoreSlice(x[j:])
	}
}

func scaleRowsSIMD(o, f []float32, n, d int) {
	for i := 0; i < n; i++ {
		x := bcast(f[i])
		for c := i * d; c < (i+1)*d; c += 16 {
			load(o[c:]).Mul(x).StoreSlice(o[c:])
		}
	}
}

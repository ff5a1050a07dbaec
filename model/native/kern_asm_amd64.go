//go:build amd64 && !purego

//go:generate go run gen_kern_amd64.go

package native

import "unsafe"

// AVX-512 micro-kernels in Go assembly (kern_amd64.s, written by
// gen_kern_amd64.go: go generate).
//
// kern6x64 / kern6x32 / kern12x32: C[rows x w] (+)= A[6 x k] * B[k x w], w = 64 or 32,
// rows of A, B, C at strides lda, ldb, ldc (elements). mode 0 overwrites C,
// 1 accumulates, 2 computes C = C*scale[r] + AB (the online-softmax rescale
// fused into the PV product). 24 (or 12) accumulators in zmm registers,
// B rows loaded once per k and A elements broadcast: the 32 registers of
// AVX-512 that Go's register allocator does not use for archsimd code.
//
// Why assembly: with archsimd, Go 1.26 allocates only X0-X14, so the best
// tile was 4x2 vectors with register copies on every FMA (VFMADD213 form);
// these kernels use the accumulate-in-place VFMADD231 form and 6x4 tiles.

//go:noescape
func kern6x64(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern6x32(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern12x32(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

// kern6x64T / kern6x32T / kern12x32T: the same with A stored transposed,
// op(A)[r][kk] = a[kk*lda + r] (dW = X^T dY, P^T dO without a copy; the
// copies they replace were 12-14% of a training step at T = 512).

//go:noescape
func kern6x64T(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern6x32T(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func kern12x32T(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int)

//go:noescape
func expShiftAVX512(x *float32, n int, m float32, consts *[12]float32) float32

//go:noescape
func geluAVX512(x *float32, n int, consts *[16]float32)

//go:noescape
func geluTanhAVX512(u *float32, bias *float32, th *float32, gel *float32, n int, consts *[16]float32)

//go:noescape
func rampAVX512(x *float32, n int, base float32, slope float32, iota *[16]float32)

//go:noescape
func softmaxRowsAVX512(s *float32, nq int, m *float32, rs *float32, d *float32, consts *[12]float32)

//go:noescape
func maxAVX512(x *float32, n int) float32

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

func xgetbv0() (eax, edx uint32)

// asmAvailable checks AVX-512F in the CPU (CPUID leaf 7) and that the OS
// saves the opmask and zmm state (XCR0 bits 1, 2, 5, 6, 7), as
// golang.org/x/sys/cpu does, without the dependency.
func asmAvailable() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	if ecx1&(1<<27) == 0 { // OSXSAVE: XGETBV is usable
		return false
	}
	if xcr0, _ := xgetbv0(); xcr0&0xe6 != 0xe6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<16) != 0 // AVX512F
}

// expConsts: the assembly exps clamp at -120 instead of masking lanes
// below expLo: 2^-173 underflows to an exact 0 (so do -Inf scores), and
// arguments in (-104, -87) give values under 1.7e-38, invisible beside a
// softmax sum >= 1.
var expConsts = [12]float32{-120, expLog2e, -expC1, -expC2, expP0, expP1, expP2, expP3, expP4, expP5, 1, 0}

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

func expShiftAsm(x []float32, m float32) float32 {
	if len(x) == 0 {
		return 0
	}
	return expShiftAVX512(&x[0], len(x), m, &expConsts)
}

var geluConsts = [16]float32{2 * geluK, 2 * geluK * 0.044715, 18, -18, expLog2e, -expC1, -expC2,
	expP0, expP1, expP2, expP3, expP4, expP5, 1, 0, 0}

// geluAsm handles the largest multiple of 16 and returns how many it did.
func geluAsm(x []float32) int {
	n := len(x) &^ 15
	if n > 0 {
		geluAVX512(&x[0], n, &geluConsts)
	}
	return n
}

var geluTanhConsts = [16]float32{2 * geluK, 2 * geluK * 0.044715, 18, -18, expLog2e, -expC1, -expC2,
	expP0, expP1, expP2, expP3, expP4, expP5, 1, 2, 0.5}

// geluTanhAsm is GELUTanh (with the bias added first, when not nil) on the
// largest multiple of 16 and returns how many it did.
func geluTanhAsm(u, bias, th, g []float32) int {
	n := len(u) &^ 15
	if n == 0 {
		return 0
	}
	_, _ = th[n-1], g[n-1]
	var bp *float32
	if bias != nil {
		_ = bias[n-1]
		bp = &bias[0]
	}
	geluTanhAVX512(&u[0], bp, &th[0], &g[0], n, &geluTanhConsts)
	return n
}

var iotaConsts = [16]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

func addRampAsm(x []float32, base, slope float32) {
	if len(x) > 0 {
		rampAVX512(&x[0], len(x), base, slope, &iotaConsts)
	}
}

// softmaxRowsAsm is the online-softmax step for nq rows of 64 scores:
// scores become exp(s - m_new); m, l and the rescale factors f update.
func softmaxRowsAsm(s []float32, nq int, m, l, f, rs []float32) {
	_, _, _, _, _ = s[nq*64-1], m[nq-1], l[nq-1], f[len(f)-1], rs[nq-1]
	softmaxRowsAVX512(&s[0], nq, &m[0], &rs[0], &f[0], &softmaxExpConsts)
	rescaleSums(nq, l, f, rs)
}

// rescaleSums finishes an online-softmax step after the assembly: the
// factors f = exp(m_old - m_new), 16 rows at a time, then l = l f + rs.
func rescaleSums(nq int, l, f, rs []float32) {
	expShiftAsm(f[:(nq+15)&^15], 0)
	for r := 0; r < nq; r++ {
		l[r] = l[r]*f[r] + rs[r]
	}
}

func maxOfAsm(x []float32) float32 {
	if len(x) == 0 {
		return float32(negInf)
	}
	return maxAVX512(&x[0], len(x))
}

const (
	modeSet   = 0
	modeAcc   = 1
	modeScale = 2
)

// mmAsm computes rows [0,m) of c (+)= a * b for a column width w of 32 or
// 64, in the row tiles of rowTile; a tail under 6 rows (not 4) goes through
// zero-padded copies.
// scale is read only in modeScale.
func mmAsm(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, w, mode int, scale []float32) {
	var sp *float32
	for i, r := 0, 0; i < m; i += r {
		r = rowTile(m, w, i)
		if mode == modeScale {
			sp = &scale[i]
		}
		switch r {
		case 12:
			kern12x32(ptr(a, i*lda), lda, ptr(b, 0), ldb, k, ptr(c, i*ldc), ldc, sp, mode)
		case 6:
			kern6(w, ptr(a, i*lda), lda, ptr(b, 0), ldb, k, ptr(c, i*ldc), ldc, sp, mode)
		case 4:
			kern4(w, ptr(a, i*lda), lda, ptr(b, 0), ldb, k, ptr(c, i*ldc), ldc, sp, mode)
		default:
			mmTail(c[i*ldc:], ldc, a[i*lda:], lda, b, ldb, r, k, w, mode, scale[min(i, len(scale)):])
		}
	}
}

// kern6 calls the 6-row kernel of width w directly: a call through a
// function value would make escape analysis move the callers' stack
// buffers to the heap (one allocation per call, measured at 9% of a run).
func kern6(w int, a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int) {
	if w == 32 {
		kern6x32(a, lda, b, ldb, k, c, ldc, scale, mode)
	} else {
		kern6x64(a, lda, b, ldb, k, c, ldc, scale, mode)
	}
}

// mmTail handles r < 6 rows through zero-padded 6-row copies.
func mmTail(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, r, k, w, mode int, scale []float32) {
	var tc [6 * 64]float32
	var ts [6]float32
	var tbuf [6 * 512]float32 // on the stack for the model's usual k
	ta := tbuf[:]
	if 6*k > len(tbuf) {
		ta = make([]float32, 6*k)
	}
	for t := 0; t < r; t++ {
		copy(ta[t*k:(t+1)*k], a[t*lda:t*lda+k])
		if mode != modeSet {
			copy(tc[t*w:(t+1)*w], c[t*ldc:t*ldc+w])
		}
		if mode == modeScale {
			ts[t] = scale[t]
		}
	}
	kern6(w, &ta[0], k, ptr(b, 0), ldb, k, &tc[0], w, &ts[0], mode)
	for t := 0; t < r; t++ {
		copy(c[t*ldc:t*ldc+w], tc[t*w:(t+1)*w])
	}
}

// ptr is &x[off] without a bounds check on the full extent the kernel
// reads; callers guarantee the extents (the tests check every shape).
func ptr(x []float32, off int) *float32 {
	return (*float32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(x)), off*4))
}

// mmAsmT is mmAsm with A stored transposed: op(A)[i][kk] = a[kk*lda+i].
func mmAsmT(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, w, mode int, scale []float32) {
	var sp *float32
	for i, r := 0, 0; i < m; i += r {
		r = rowTile(m, w, i)
		if mode == modeScale {
			sp = &scale[i]
		}
		switch r {
		case 12:
			kern12x32T(ptr(a, i), lda, ptr(b, 0), ldb, k, ptr(c, i*ldc), ldc, sp, mode)
		case 6:
			kern6T(w, ptr(a, i), lda, ptr(b, 0), ldb, k, ptr(c, i*ldc), ldc, sp, mode)
		case 4:
			kern4T(w, ptr(a, i), lda, ptr(b, 0), ldb, k, ptr(c, i*ldc), ldc, sp, mode)
		default:
			mmTailT(c[i*ldc:], ldc, a[i:], lda, b, ldb, r, k, w, mode, scale[min(i, len(scale)):])
		}
	}
}

func kern6T(w int, a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int, scale *float32, mode int) {
	if w == 32 {
		kern6x32T(a, lda, b, ldb, k, c, ldc, scale, mode)
	} else {
		kern6x64T(a, lda, b, ldb, k, c, ldc, scale, mode)
	}
}

// mmTailT handles r < 6 rows of a transposed A through a zero-padded copy
// k x 6 (reading a's next columns could run past its end).
func mmTailT(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, r, k, w, mode int, scale []float32) {
	var tc [6 * 64]float32
	var ts [6]float32
	buf := getScratch(6 * k) // k reaches the batch's positions (dW = X^T dY)
	defer putScratch(buf)
	ta := *buf
	for kk := 0; kk < k; kk++ {
		row := ta[kk*6 : kk*6+6]
		copy(row, a[kk*lda:kk*lda+r])
		clear(row[r:])
	}
	for t := 0; t < r; t++ {
		if mode != modeSet {
			copy(tc[t*w:(t+1)*w], c[t*ldc:t*ldc+w])
		}
		if mode == modeScale {
			ts[t] = scale[t]
		}
	}
	kern6T(w, &ta[0], 6, ptr(b, 0), ldb, k, &tc[0], w, &ts[0], mode)
	for t := 0; t < r; t++ {
		copy(c[t*ldc:t*ldc+w], tc[t*w:(t+1)*w])
	}
}

//go:noescape
func scaleMaxAVX512(x *float32, n int, s float32) float32

//go:noescape
func scaleAVX512(x *float32, n int, s float32)

//go:noescape
func addOffsetsAVX512(x *float32, b *float32, n int, a float32)

//go:noescape
func addAVX512(x *float32, y *float32, n int)

//go:noescape
func softmaxGradAVX512(ds *float32, p *float32, n int, rd float32, s float32)

// The row passes (rows_api.go) on len(x), a nonzero multiple of 16.
func scaleMaxAsm(x []float32, s float32) float32 { return scaleMaxAVX512(&x[0], len(x), s) }
func scaleAsm(x []float32, s float32)            { scaleAVX512(&x[0], len(x), s) }
func addOffsetsAsm(x []float32, a float32, b []float32) {
	_ = b[len(x)-1]
	addOffsetsAVX512(&x[0], &b[0], len(x), a)
}
func addAsm(x, y []float32) {
	_ = y[len(x)-1]
	addAVX512(&x[0], &y[0], len(x))
}
func softmaxGradAsm(ds, p []float32, rd, s float32) {
	_ = p[len(ds)-1]
	softmaxGradAVX512(&ds[0], &p[0], len(ds), rd, s)
}

//go:noescape
func mulAVX512(dst *float32, x *float32, y *float32, n int)

//go:noescape
func addMulAVX512(dst *float32, a *float32, b *float32, n int)

//go:noescape
func normScaleAVX512(nr *float32, ar *float32, x *float32, gain *float32, n int, inv float32)

//go:noescape
func normGradAVX512(xr *float32, nr *float32, n int, inv float32, dot float32)

//go:noescape
func normGradResAVX512(xr *float32, nr *float32, res *float32, n int, inv float32, dot float32)

// The norm passes (rows_api.go) on len(dst), a nonzero multiple of 16; the
// other slices at least as long.
func mulAsm(dst, x, y []float32) {
	_, _ = x[len(dst)-1], y[len(dst)-1]
	mulAVX512(&dst[0], &x[0], &y[0], len(dst))
}
func addMulAsm(dst, a, b []float32) {
	_, _ = a[len(dst)-1], b[len(dst)-1]
	addMulAVX512(&dst[0], &a[0], &b[0], len(dst))
}
func normScaleAsm(nr, ar, x, g []float32, r float32) {
	_, _, _ = ar[len(nr)-1], x[len(nr)-1], g[len(nr)-1]
	normScaleAVX512(&nr[0], &ar[0], &x[0], &g[0], len(nr), r)
}
func normGradAsm(xr, nr, res []float32, r, dot float32) {
	_ = nr[len(xr)-1]
	if res == nil {
		normGradAVX512(&xr[0], &nr[0], len(xr), r, dot)
		return
	}
	_ = res[len(xr)-1]
	normGradResAVX512(&xr[0], &nr[0], &res[0], len(xr), r, dot)
}

//go:noescape
func rotPairsAVX512(u *float32, cos *float32, sin *float32, n int, signs *[16]float32)

// rotPairsAsm is RotatePairs on len(u), a nonzero multiple of 16.
func rotPairsAsm(u, cos, sin []float32, sign float32) {
	_, _ = cos[len(u)-1], sin[len(u)-1]
	var signs [16]float32
	for j := range signs {
		signs[j] = sign
		if j%2 == 0 {
			signs[j] = -sign
		}
	}
	rotPairsAVX512(&u[0], &cos[0], &sin[0], len(u), &signs)
}

//go:noescape
func rotRowsAVX512(dst *float32, ldd int, src *float32, lds int, cs *float32, ldc int, rows int, n int, scale float32, signs *[16]float32)

// rotSigns: -1 on the first lane of each pair, for rotRows'
// u0*c + u1*(-s); unrotSigns: -1 on the second, for u1*c + u0*(-s).
var (
	rotSigns   = [16]float32{-1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1}
	unrotSigns = [16]float32{1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1}
)

// rotRowsAsm is RotateRows (UnrotateRows with inverse) on columns [0, n)
// of each row, n a nonzero multiple of 16 (the caller checks the slices'
// lengths).
func rotRowsAsm(dst []float32, ldd int, src []float32, lds int, cs []float32, ldc, rows, n int, scale float32, inverse bool) {
	signs := &rotSigns
	if inverse {
		signs = &unrotSigns
	}
	rotRowsAVX512(&dst[0], ldd, &src[0], lds, &cs[0], ldc, rows, n, scale, signs)
}

//go:noescape
func geluGradMulAVX512(du *float32, u *float32, th *float32, n int, consts *[4]float32)

// geluGradMulConsts: 0.5, 1, k and 3 * 0.044715 as the portable loop's
// float32 constants.
var geluGradMulConsts = [4]float32{0.5, 1, geluK, 3 * 0.044715}

// geluGradMulAsm is GELUGradMul on len(du), a nonzero multiple of 16.
func geluGradMulAsm(du, u, th []float32) {
	_, _ = u[len(du)-1], th[len(du)-1]
	geluGradMulAVX512(&du[0], &u[0], &th[0], len(du), &geluGradMulConsts)
}

//go:noescape
func transpose8AVX(dst *float32, ldd int, src *float32, lds int, nblk int)

// transpose8Asm transposes src's columns [0, 8), rows [0, 8 nblk) (stride
// lds) into dst's rows [0, 8), columns [0, 8 nblk) (stride ldd).
func transpose8Asm(dst []float32, ldd int, src []float32, lds, nblk int) {
	_, _ = src[(8*nblk-1)*lds+7], dst[7*ldd+8*nblk-1]
	transpose8AVX(&dst[0], ldd, &src[0], lds, nblk)
}

//go:noescape
func negAbsAVX512(dst *float32, y *float32, n int)

//go:noescape
func siluFinishAVX512(sg *float32, w *float32, y *float32, n int)

// SiLU's first and last passes on len(y), a nonzero multiple of 16.
func negAbsAsm(dst, y []float32) {
	_ = dst[len(y)-1]
	negAbsAVX512(&dst[0], &y[0], len(y))
}
func siluFinishAsm(w, sg, y []float32) {
	_, _ = w[len(y)-1], sg[len(y)-1]
	siluFinishAVX512(&sg[0], &w[0], &y[0], len(y))
}

//go:noescape
func siluGradMulAVX512(dy *float32, y *float32, sg *float32, n int)

// siluGradMulAsm is SiLUGradMul on len(dy), a nonzero multiple of 16.
func siluGradMulAsm(dy, y, sg []float32) {
	_, _ = y[len(dy)-1], sg[len(dy)-1]
	siluGradMulAVX512(&dy[0], &y[0], &sg[0], len(dy))
}

//go:build amd64 && !purego

//go:generate go run gen_kern_amd64.go

package native

import "unsafe"

// AVX-512 micro-kernels in Go assembly (kern_amd64.s, written by
// gen_kern_amd64.go: go generate), and the dispatch between them and the
// AVX2 set (kern_avx2_amd64.go) where useAVX2.
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

// avx512Available checks AVX-512F in the CPU (CPUID leaf 7) and that the
// OS saves the opmask and zmm state (XCR0 bits 1, 2, 5, 6, 7), as
// golang.org/x/sys/cpu does, without the dependency.
func avx512Available() bool {
	if !osSavesYMM() {
		return false
	}
	if xcr0, _ := xgetbv0(); xcr0&0xe6 != 0xe6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<16) != 0 // AVX512F
}

// avx2Available checks AVX2 (CPUID leaf 7 EBX bit 5) and FMA (leaf 1 ECX
// bit 12) in the CPU and that the OS saves the ymm state (OSXSAVE, XCR0
// bits 1 and 2): x86-64-v3's vector part.
func avx2Available() bool {
	if !osSavesYMM() {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	_, ebx7, _, _ := cpuid(7, 0)
	return ecx1&(1<<12) != 0 && ebx7&(1<<5) != 0
}

// osSavesYMM: CPUID leaf 7 exists, XGETBV is usable (OSXSAVE, leaf 1 ECX
// bit 27) and the OS saves the xmm and ymm state (XCR0 bits 1, 2).
func osSavesYMM() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	if ecx1&(1<<27) == 0 {
		return false
	}
	xcr0, _ := xgetbv0()
	return xcr0&6 == 6
}

// whyNot says why set s does not run on this host.
func whyNot(s kernelSet) string {
	if s == setAVX512 {
		return "the CPU lacks AVX-512F or the OS does not save the zmm state"
	}
	return "the CPU lacks AVX2 or FMA or the OS does not save the ymm state"
}

func expShiftAsm(x []float32, m float32) float32 {
	if len(x) == 0 {
		return 0
	}
	if useAVX2 {
		return expShiftAVX2(&x[0], len(x), m, expAVX2Consts)
	}
	return expShiftAVX512(&x[0], len(x), m, &expConsts)
}

// geluAsm handles the largest multiple of 16 and returns how many it did.
func geluAsm(x []float32) int {
	n := len(x) &^ 15
	if n > 0 {
		if useAVX2 {
			geluAVX2(&x[0], n, geluAVX2Table)
		} else {
			geluAVX512(&x[0], n, &geluConsts)
		}
	}
	return n
}

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
	if useAVX2 {
		geluTanhAVX2(&u[0], bp, &th[0], &g[0], n, geluAVX2Table)
	} else {
		geluTanhAVX512(&u[0], bp, &th[0], &g[0], n, &geluConsts)
	}
	return n
}

var iotaConsts = [16]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

func addRampAsm(x []float32, base, slope float32) {
	if len(x) > 0 {
		if useAVX2 {
			rampAVX2(&x[0], len(x), base, slope, &iotaConsts)
		} else {
			rampAVX512(&x[0], len(x), base, slope, &iotaConsts)
		}
	}
}

// softmaxRowsAsm is the online-softmax step for nq rows of 64 scores:
// scores become exp(s - m_new); m, l and the rescale factors f update.
func softmaxRowsAsm(s []float32, nq int, m, l, f, rs []float32) {
	_, _, _, _, _ = s[nq*64-1], m[nq-1], l[nq-1], f[len(f)-1], rs[nq-1]
	if useAVX2 {
		softmaxRowsAVX2(&s[0], nq, &m[0], &rs[0], &f[0], softmaxAVX2)
	} else {
		softmaxRowsAVX512(&s[0], nq, &m[0], &rs[0], &f[0], &softmaxExpConsts)
	}
	rescaleSums(nq, l, f, rs)
}

func maxOfAsm(x []float32) float32 {
	if len(x) == 0 {
		return float32(negInf)
	}
	if useAVX2 {
		return maxAVX2(&x[0], len(x))
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
	if useAVX2 {
		mmAVX2(false, c, ldc, a, lda, b, ldb, m, k, w, mode, scale)
		return
	}
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
	if useAVX2 {
		mmAVX2(true, c, ldc, a, lda, b, ldb, m, k, w, mode, scale)
		return
	}
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
func scaleMaxAsm(x []float32, s float32) float32 {
	if useAVX2 {
		return scaleMaxAVX2(&x[0], len(x), s)
	}
	return scaleMaxAVX512(&x[0], len(x), s)
}
func scaleAsm(x []float32, s float32) {
	if useAVX2 {
		scaleAVX2(&x[0], len(x), s)
		return
	}
	scaleAVX512(&x[0], len(x), s)
}
func addOffsetsAsm(x []float32, a float32, b []float32) {
	_ = b[len(x)-1]
	if useAVX2 {
		addOffsetsAVX2(&x[0], &b[0], len(x), a)
		return
	}
	addOffsetsAVX512(&x[0], &b[0], len(x), a)
}
func addAsm(x, y []float32) {
	_ = y[len(x)-1]
	if useAVX2 {
		addAVX2(&x[0], &y[0], len(x))
		return
	}
	addAVX512(&x[0], &y[0], len(x))
}
func softmaxGradAsm(ds, p []float32, rd, s float32) {
	_ = p[len(ds)-1]
	if useAVX2 {
		softmaxGradAVX2(&ds[0], &p[0], len(ds), rd, s)
		return
	}
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
	if useAVX2 {
		mulAVX2(&dst[0], &x[0], &y[0], len(dst))
		return
	}
	mulAVX512(&dst[0], &x[0], &y[0], len(dst))
}
func addMulAsm(dst, a, b []float32) {
	_, _ = a[len(dst)-1], b[len(dst)-1]
	if useAVX2 {
		addMulAVX2(&dst[0], &a[0], &b[0], len(dst))
		return
	}
	addMulAVX512(&dst[0], &a[0], &b[0], len(dst))
}
func normScaleAsm(nr, ar, x, g []float32, r float32) {
	_, _, _ = ar[len(nr)-1], x[len(nr)-1], g[len(nr)-1]
	if useAVX2 {
		normScaleAVX2(&nr[0], &ar[0], &x[0], &g[0], len(nr), r)
		return
	}
	normScaleAVX512(&nr[0], &ar[0], &x[0], &g[0], len(nr), r)
}
func normGradAsm(xr, nr, res []float32, r, dot float32) {
	_ = nr[len(xr)-1]
	switch {
	case res == nil && useAVX2:
		normGradAVX2(&xr[0], &nr[0], len(xr), r, dot)
	case res == nil:
		normGradAVX512(&xr[0], &nr[0], len(xr), r, dot)
	case useAVX2:
		_ = res[len(xr)-1]
		normGradResAVX2(&xr[0], &nr[0], &res[0], len(xr), r, dot)
	default:
		_ = res[len(xr)-1]
		normGradResAVX512(&xr[0], &nr[0], &res[0], len(xr), r, dot)
	}
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
	if useAVX2 {
		rotPairsAVX2(&u[0], &cos[0], &sin[0], len(u), &signs)
		return
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
	if useAVX2 {
		rotRowsAVX2(&dst[0], ldd, &src[0], lds, &cs[0], ldc, rows, n, scale, signs)
		return
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
	if useAVX2 {
		geluGradMulAVX2(&du[0], &u[0], &th[0], len(du), &geluGradMulConsts)
		return
	}
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
	if useAVX2 {
		negAbsAVX2(&dst[0], &y[0], len(y))
		return
	}
	negAbsAVX512(&dst[0], &y[0], len(y))
}
func siluFinishAsm(w, sg, y []float32) {
	_, _ = w[len(y)-1], sg[len(y)-1]
	if useAVX2 {
		siluFinishAVX2(&sg[0], &w[0], &y[0], len(y))
		return
	}
	siluFinishAVX512(&sg[0], &w[0], &y[0], len(y))
}

//go:noescape
func siluGradMulAVX512(dy *float32, y *float32, sg *float32, n int)

// siluGradMulAsm is SiLUGradMul on len(dy), a nonzero multiple of 16.
func siluGradMulAsm(dy, y, sg []float32) {
	_, _ = y[len(dy)-1], sg[len(dy)-1]
	if useAVX2 {
		siluGradMulAVX2(&dy[0], &y[0], &sg[0], len(dy))
		return
	}
	siluGradMulAVX512(&dy[0], &y[0], &sg[0], len(dy))
}

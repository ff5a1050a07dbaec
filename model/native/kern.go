package native

// The micro-kernels below are the only code that touches the inner loops of
// attention and matrix products. Each has a portable Go version (kern_generic.go)
// and, when built with GOEXPERIMENT=simd on an AVX-512 machine, a version on
// 16-wide float32 vectors (kern_simd_amd64.go). Tests compare both against
// float64 references; the dispatch is one branch per block, not per element.

// haveSIMD reports whether the vector kernels are compiled in and the CPU
// runs them. It is a variable so tests can force the portable path.
var haveSIMD = simdAvailable()

// KernelName says which micro-kernels a process uses, for benchmark logs.
func KernelName() string {
	if haveSIMD {
		return "avx512 (archsimd)"
	}
	return "portable Go"
}

// qkBlock sets s[i*bk+j] = sum_c q[i*d+c] * kt[c*bk+j] for i < nq, j < bk.
// kt is one key block transposed (d rows of bk keys); bk is a multiple of 16.
func qkBlock(s, q, kt []float32, nq, d, bk int) {
	if haveSIMD {
		qkBlockSIMD(s, q, kt, nq, d, bk)
		return
	}
	qkBlockGeneric(s, q, kt, nq, d, bk)
}

// pvBlock adds o[i*d+c] += sum_{j<nk} p[i*bk+j] * v[j*d+c] for i < nq.
func pvBlock(o, p, v []float32, nq, d, bk, nk int) {
	if haveSIMD && d%16 == 0 {
		pvBlockSIMD(o, p, v, nq, d, bk, nk)
		return
	}
	pvBlockGeneric(o, p, v, nq, d, bk, nk)
}

// expShift sets x[j] = exp(x[j] - m) for all j and returns their sum.
// Arguments below about -87 (and -Inf) give exactly 0. len(x) is a
// multiple of 16.
func expShift(x []float32, m float32) float32 {
	if haveSIMD {
		return expShiftSIMD(x, m)
	}
	return expShiftGeneric(x, m)
}

// maxOf returns the largest element of x (len(x) a multiple of 16).
func maxOf(x []float32) float32 {
	if haveSIMD {
		return maxOfSIMD(x)
	}
	return maxOfGeneric(x)
}

// scaleRows multiplies o[i*d:(i+1)*d] by f[i] for i < n.
func scaleRows(o, f []float32, n, d int) {
	if haveSIMD && d%16 == 0 {
		scaleRowsSIMD(o, f, n, d)
		return
	}
	for i := 0; i < n; i++ {
		r := o[i*d : i*d+d]
		fi := f[i]
		for c := range r {
			r[c] *= fi
		}
	}
}

// gemmPanel computes rows [0,m) of c[i*ldc+j] (+)= sum_k a[i*lda+k] * bp[k*nr+j]
// for j < nc, where bp is one packed panel of B (k rows of nr = panelWidth
// columns, zero-padded). acc selects accumulate (true) or overwrite.
func gemmPanel(c []float32, ldc int, a []float32, lda int, bp []float32, m, k, nc int, acc bool) {
	if haveSIMD {
		gemmPanelSIMD(c, ldc, a, lda, bp, m, k, nc, acc)
		return
	}
	gemmPanelGeneric(c, ldc, a, lda, bp, m, k, nc, acc)
}

// addRamp adds slope*(base+j) to x[j] (the ALiBi bias of one score row:
// base = j0 - i, so that integer distances stay exact in float32).
// len(x) is a multiple of 16.
func addRamp(x []float32, base, slope float32) {
	if haveSIMD {
		addRampSIMD(x, base, slope)
		return
	}
	for j := range x {
		x[j] += slope * (base + float32(j))
	}
}

// geluTanh applies the tanh form of GELU in place.
func geluTanh(x []float32) {
	if haveSIMD {
		n := len(x) &^ 15
		geluSIMD(x[:n])
		x = x[n:]
	}
	for j, u := range x {
		x[j] = geluScalar(u)
	}
}

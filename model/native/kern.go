package native

import "math"

// The micro-kernels below are the only code that touches the inner loops of
// attention and matrix products. Each has a portable Go version
// (kern_generic.go, kern_canon.go), an AVX2 + FMA one (kern_avx2_amd64.s,
// written by gen_kern_avx2_amd64.go) and an AVX-512 one (kern_amd64.s,
// written by gen_kern_amd64.go), all three the same float32 operations in
// the same order (kernels.go). Tests compare them with each other bit for
// bit and against float64 references; the dispatch is one branch per
// block, not per element. (An archsimd version,
// GOEXPERIMENT=simd, was superseded by the assembly and built by no target;
// it is gone.)

var negInf = math.Inf(-1)

// qkBlock sets s[i*bk+j] = sum_c q[i*d+c] * kt[c*bk+j] for i < nq, j < bk.
// kt is one key block transposed (d rows of bk keys); bk is a multiple of 16.
func qkBlock(s, q, kt []float32, nq, d, bk int) {
	if haveAsm && bk%64 == 0 {
		for j := 0; j < bk; j += 64 {
			mmAsm(s[j:], bk, q, d, kt[j:], bk, nq, d, 64, modeSet, nil)
		}
		return
	}
	qkBlockGeneric(s, q, kt, nq, d, bk)
}

// pvBlock adds o[i*d+c] += sum_{j<nk} p[i*bk+j] * v[j*d+c] for i < nq.
func pvBlock(o, p, v []float32, nq, d, bk, nk int) {
	if haveAsm && d%32 == 0 {
		pvAsm(o, p, v, nq, d, bk, nk, modeAcc, nil)
		return
	}
	pvBlockGeneric(o, p, v, nq, d, bk, nk)
}

// pvBlockScaled is pvBlock after multiplying row i of o by f[i] (the
// online-softmax rescale), fused into one pass where the kernels allow.
func pvBlockScaled(o, p, v []float32, nq, d, bk, nk int, f []float32) {
	if haveAsm && d%32 == 0 {
		pvAsm(o, p, v, nq, d, bk, nk, modeScale, f)
		return
	}
	scaleRows(o, f, nq, d)
	pvBlock(o, p, v, nq, d, bk, nk)
}

func pvAsm(o, p, v []float32, nq, d, bk, nk, mode int, f []float32) {
	for c := 0; c < d; {
		w := 64
		if c+64 > d {
			w = 32
		}
		mmAsm(o[c:], d, p, bk, v[c:], d, nq, nk, w, mode, f)
		c += w
	}
}

// expShift sets x[j] = exp(x[j] - m) for all j and returns their sum.
// Arguments below about -87 (and -Inf) give exactly 0. len(x) is a
// multiple of 16.
func expShift(x []float32, m float32) float32 {
	if haveAsm {
		return expShiftAsm(x, m)
	}
	return expShiftLanes(x, m)
}

// maxOf returns the largest element of x (len(x) a multiple of 16).
func maxOf(x []float32) float32 {
	if haveAsm {
		return maxOfAsm(x)
	}
	return maxLanes(x)
}

// rowTile is the height of the micro-kernel tile that mmAsm and mmAsmT
// run from row i of m rows at column width w: 12 at w = 32 while 12 rows
// remain, else 6, but 4 when 4 or 8 rows remain (m = 6n + 2 gives up one
// 6-row tile for two 4-row tiles rather than a padded copy), and the tail
// (< 6 rows) as it is. Gemm's triangular limits (gemmTiles.rows) apply per such tile.
func rowTile(m, w, i int) int {
	switch left := m - i; {
	case w == panelWidth/2 && left >= 12:
		return 12
	case left == 4 || left == 8:
		return 4
	case left >= 6:
		return 6
	default:
		return left
	}
}

// scaleRows multiplies o[i*d:(i+1)*d] by f[i] for i < n.
func scaleRows(o, f []float32, n, d int) {
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
// ldb is bp's row stride: panelWidth for a packed panel, or B's own (only
// with the assembly kernels: Gemm reads B in place only then).
func gemmPanel(c []float32, ldc int, a []float32, lda int, bp []float32, ldb, m, k, nc int, acc bool) {
	countFlops(m, k, nc)
	if haveAsm {
		gemmPanelAsm(c, ldc, a, lda, bp, ldb, m, k, nc, acc, false)
		return
	}
	gemmPanelGeneric(c, ldc, a, lda, bp, m, k, nc, acc)
}

// gemmPanelT is gemmPanel with A stored transposed: op(A)[i][kk] =
// a[kk*lda+i]. Only the assembly kernels read A that way (transposedA says
// when); the portable path transposes A first.
func gemmPanelT(c []float32, ldc int, a []float32, lda int, bp []float32, ldb, m, k, nc int, acc bool) {
	countFlops(m, k, nc)
	gemmPanelAsm(c, ldc, a, lda, bp, ldb, m, k, nc, acc, true)
}

// transposedA reports whether Gemm reads a transposed A in place
// (gemmPanelT) instead of copying its transpose.
func transposedA() bool { return haveAsm }

// addRamp adds slope*(base+j) to x[j] (the ALiBi bias of one score row:
// base = j0 - i, so that integer distances stay exact in float32).
// len(x) is a multiple of 16.
func addRamp(x []float32, base, slope float32) {
	if haveAsm {
		addRampAsm(x, base, slope)
		return
	}
	rampLanes(x, base, slope)
}

// geluTanh applies the tanh form of GELU in place.
func geluTanh(x []float32) {
	if haveAsm {
		x = x[geluAsm(x):]
	} else {
		x = x[geluLanes(x):]
	}
	for j, u := range x {
		x[j] = geluScalar(u)
	}
}

func gemmPanelAsm(c []float32, ldc int, a []float32, lda int, bp []float32, ldb, m, k, nc int, acc, ta bool) {
	mode := modeSet
	if acc {
		mode = modeAcc
	}
	if nc == panelWidth || nc == panelWidth/2 {
		// nc = 32: one head's 32 columns (d = 32): the 32-wide kernels on the
		// panel's first half, instead of 64 columns of which half are
		// padding and a copy through the tile.
		if ta {
			mmAsmT(c, ldc, a, lda, bp, ldb, m, k, nc, mode, nil)
		} else {
			mmAsm(c, ldc, a, lda, bp, ldb, m, k, nc, mode, nil)
		}
		return
	}
	// A partial panel (the last columns of B): go through a full-width tile.
	var tile [6 * panelWidth]float32
	for i := 0; i < m; i += 6 {
		r := min(6, m-i)
		for t := 0; t < r; t++ {
			if acc {
				copy(tile[t*panelWidth:t*panelWidth+nc], c[(i+t)*ldc:(i+t)*ldc+nc])
			}
		}
		if ta {
			mmAsmT(tile[:], panelWidth, a[i:], lda, bp, ldb, r, k, panelWidth, mode, nil)
		} else {
			mmAsm(tile[:], panelWidth, a[i*lda:], lda, bp, ldb, r, k, panelWidth, mode, nil)
		}
		for t := 0; t < r; t++ {
			copy(c[(i+t)*ldc:(i+t)*ldc+nc], tile[t*panelWidth:t*panelWidth+nc])
		}
	}
}

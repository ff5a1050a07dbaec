package native

// The exported blocks of streaming attention and the row-block GEMM on
// pre-packed weights, for the evaluator (model/nativeeval). Thin wrappers
// (inlined) over the dispatching kernels of kern.go; their contracts are
// those functions'. The online-softmax steps have their own exp
// (softmaxExpSteps in gen_kern_amd64.go, softmaxExpLane in kern_canon.go),
// the same bits in every kernel set.

// PackedB is a K x N matrix packed into 64-column panels for GemmPacked.
type PackedB = packedB

// PackB packs row-major b (k x n).
func PackB(b []float32, k, n int) *PackedB { return packB(b, k, n) }

// GemmPacked sets (or adds to, when acc) rows [0, m) of c (leading dimension ldc)
// the product a (m x k, leading dimension lda) times b, on the calling
// goroutine.
func GemmPacked(c []float32, ldc int, a []float32, lda int, b *PackedB, m int, acc bool) {
	gemm(c, ldc, a, lda, b, m, acc)
}

// QKBlock sets s[i*bk+j] = sum_c q[i*d+c] kt[c*bk+j] (one key block of
// scores; kt is the block transposed; bk a multiple of 16).
func QKBlock(s, q, kt []float32, nq, d, bk int) { qkBlock(s, q, kt, nq, d, bk) }

// PVBlock adds o[i*d+c] += sum_{j<nk} p[i*bk+j] v[j*d+c].
func PVBlock(o, p, v []float32, nq, d, bk, nk int) { pvBlock(o, p, v, nq, d, bk, nk) }

// PVBlockScaled is PVBlock after scaling row i of o by f[i].
func PVBlockScaled(o, p, v []float32, nq, d, bk, nk int, f []float32) {
	pvBlockScaled(o, p, v, nq, d, bk, nk, f)
}

// MaxOf is the largest element of x (len(x) a multiple of 16).
func MaxOf(x []float32) float32 { return maxOf(x) }

// AddRamp adds slope*(base+j) to x[j] (len(x) a multiple of 16).
func AddRamp(x []float32, base, slope float32) { addRamp(x, base, slope) }

// OnlineSoftmax64 is one online-softmax step for nq rows of 64 scores in
// sc: the scores become exp(s - m_new); the running row max m, row sum l,
// rescale factors f and block row sums rs update.
func OnlineSoftmax64(sc []float32, nq int, m, l, f, rs []float32) {
	if haveAsm {
		softmaxRowsAsm(sc, nq, m, l, f, rs)
		return
	}
	softmaxRowsLanes(sc, nq, m, rs, f, nil, nil, nil)
	rescaleSums(nq, l, f, rs)
}

// rescaleSums finishes an online-softmax step: the factors f =
// exp(m_old - m_new), 16 rows at a time (f's capacity reaches a multiple
// of 16), then l = l f + rs (the product rounded on its own).
func rescaleSums(nq int, l, f, rs []float32) {
	expShift(f[:(nq+15)&^15], 0)
	for r := 0; r < nq; r++ {
		l[r] = float32(l[r]*f[r]) + rs[r]
	}
}

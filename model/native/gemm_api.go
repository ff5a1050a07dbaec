package native

import "sync"

// The exported matrix product: the packed sgemm of this package for the
// native trainer (model/nativetrain), with the transposed operands of a
// backward pass (dX = dY W^T, dW = X^T dY), strided operands (one head's
// columns of a [T][H][d] activation, without a head-major copy) and the
// triangular structure of causal attention (tiles that only multiply
// structural zeros, or that nobody reads, are skipped).
//
// Determinism: the work is cut into (row block, panel) tiles whose shapes
// depend only on the product's shape; every element of C is computed by
// exactly one tile, which runs its whole K reduction in one fixed order
// through the same micro-kernel, so the result is bitwise the same whatever
// the number of workers and the thread timing (TestMatMulWorkerIndependent).

// Tri is what a product knows about the causal structure of its operands:
// flags, combined with | (one of LowerA and UpperA, one of LowerB and UpperB).
type Tri int

const (
	// Dense: no structure.
	Dense Tri = 0
	// LowerC: only C[i][j] with j <= i are wanted (scores of a causal
	// row); tiles wholly above the diagonal are not computed, and C's
	// elements above the diagonal hold anything afterwards.
	LowerC Tri = 1 << iota
	// LowerA: op(A)[i][kk] = 0 for kk > i (causal probabilities times
	// values): the reduction of rows [i0, i1) stops at i1.
	LowerA
	// UpperA: op(A)[i][kk] = 0 for kk < i (their transpose): the
	// reduction of rows [i0, i1) starts at i0.
	UpperA
	// LowerB: op(B)[kk][j] = 0 for kk < j (a product of two lower
	// triangles, PaTH's T x T matrices): the reduction of columns
	// [j0, j1) starts at j0.
	LowerB
	// UpperB: op(B)[kk][j] = 0 for kk > j: the reduction of columns
	// [j0, j1) stops at j1.
	UpperB
)

// Gemm sets C = op(A) op(B), or adds it to C when Acc. Matrices are
// row-major with leading dimensions Ldc, Lda, Ldb (0: dense, the stored
// row length): C is M x N; op(A) is M x K, stored as A (M x K) or, when TA,
// as its transpose (K x M); op(B) is K x N, stored as B or, when TB, as its
// transpose (N x K). Workers <= 0 means GOMAXPROCS; 1 runs on the calling
// goroutine (for callers that parallelise over many small products).
type Gemm struct {
	C, A, B       []float32
	M, K, N       int
	Ldc, Lda, Ldb int
	TA, TB, Acc   bool
	Tri           Tri
	Workers       int
}

// MatMul is Gemm on dense operands: c = op(a) op(b), or c += when acc.
func MatMul(c, a, b []float32, m, k, n int, ta, tb, acc bool, workers int) {
	Gemm{C: c, A: a, B: b, M: m, K: k, N: n, TA: ta, TB: tb, Acc: acc, Workers: workers}.Run()
}

// Run computes the product.
func (g Gemm) Run() {
	m, k, n := g.M, g.K, g.N
	if m == 0 || n == 0 {
		return
	}
	ldc := orDense(g.Ldc, n)
	if k == 0 {
		if !g.Acc {
			for i := 0; i < m; i++ {
				clear(g.C[i*ldc : i*ldc+n])
			}
		}
		return
	}
	lda, ldb := orDense(g.Lda, k), orDense(g.Ldb, n)
	if g.TA {
		lda = orDense(g.Lda, m)
	}
	if g.TB {
		ldb = orDense(g.Ldb, k)
	}
	a := g.A
	inPlaceT := g.TA && transposedA() // the kernels read op(A) = A^T as stored
	if g.TA && !inPlaceT {
		// The kernels broadcast A along its rows; a transposed A is
		// copied once (a pass over m*k elements against m*k*n FMAs).
		buf := getScratch(m * k)
		defer putScratch(buf)
		transposeInto(*buf, k, a, lda, k, m, g.Workers)
		a, lda = *buf, k
	}
	np := (n + panelWidth - 1) / panelWidth
	// A long reduction (dW = X^T dY: k = the batch's positions) reads B's
	// full panels where they lie: its panel is no more cache-friendly than
	// B's own rows, and the copy was a tenth of a training step. Not for a
	// wide B: at a row stride of 768 floats and more the panel's rows fall
	// on few cache sets and in place ran 20-40% slower than packed (d_model
	// 256's dW products, 2048^3).
	// A small B (PaTH's 64 x 64 and 64 x 96 blocks) stays in L1 where it
	// lies; packing it was a tenth of a PaTH training step.
	packFrom := 0
	if !g.TB && haveAsm && (k >= inPlaceBMinK && ldb <= inPlaceBMaxLd || k*ldb <= inPlaceBMaxSmall) {
		packFrom = n / panelWidth
		if n%panelWidth == panelWidth/2 {
			// A last panel of 32 columns (one head's d = 32: most of
			// PaTH's block products) runs the 32-wide kernels, which
			// read B where it lies as the full panels do; only other
			// partial panels go through a padded copy.
			packFrom = np
		}
	}
	j := gemmTiles{c: g.C, a: a, b: g.B, ldc: ldc, lda: lda, ldb: ldb, m: m, k: k, n: n, np: np,
		nrb: (m + gemmRowBlock - 1) / gemmRowBlock, panelMajor: useAVX2 && k*n >= panelMajorMinKN && !inPlaceT,
		packFrom: packFrom, tri: g.Tri, acc: g.Acc, inPlaceT: inPlaceT, p: packedB{k: k, n: n}}
	if packFrom < np {
		pb := getScratch(np * k * panelWidth)
		defer putScratch(pb)
		j.p.panels = (*pb)[:np*k*panelWidth]
		packInto(&j.p, g.B, ldb, g.TB, packFrom, g.Workers)
	}
	// Tiles are (row block, panel) pairs, so that products with few rows
	// (dW = X^T dY has only D rows) still split over the cores.
	tasks := j.nrb * np
	if g.Workers == 1 || tasks == 1 {
		for t := 0; t < tasks; t++ {
			j.tile(t)
		}
		return
	}
	jp := j // only the parallel path's copy goes to the heap (many small products run serially)
	parallelFor(tasks, g.Workers, jp.tile)
}

// gemmTiles is one product's operands after packing, cut into tiles.
type gemmTiles struct {
	c, a, b               []float32
	ldc, lda, ldb         int
	m, k, n, np, packFrom int
	nrb                   int  // row blocks
	panelMajor            bool // tasks in panel order (see panelMajorMinKN)
	tri                   Tri
	acc, inPlaceT         bool
	p                     packedB
}

// panelMajorMinKN is the size of B (k x n elements, 4 MiB) from which
// the AVX2 kernels' tiles run in panel order (row blocks inner), so that a
// core keeps one panel of B in its L2 across the row blocks instead of
// streaming every panel from L3 for each row block. Measured on the 2-core
// AMD EPYC VM (2026-12-07, interleaved runs, GFLOP/s, row order -> panel
// order): AVX2 at 2048^3 129.8-144.3 -> 169.7-180.1, and at d_model 768's
// shapes (4096 x 768 x 2304, x 3072 x 768, x 768 x 3072) 142-167 ->
// 173-181; the AVX-512 kernels (one 6 x 64 tile a call) fell at those
// shapes (363-407 -> 330-361), so they keep the row order, and so does a
// transposed A read in place (dW = X^T dY, chunked by gemmKChunk), whose
// training step ran no faster. Below the threshold (every product of the
// cpu profile's model) the whole of B stays in L2 and the row order keeps
// each row block of A there. The order moves no bits: each element of C is
// summed by one tile either way.
const panelMajorMinKN = 1 << 20

// tile computes tile t: row block t / np, panel t % np (panel order: panel
// t / nrb, row block t % nrb).
func (j *gemmTiles) tile(t int) {
	rb, pn := t/j.np, t%j.np
	if j.panelMajor {
		rb, pn = t%j.nrb, t/j.nrb
	}
	i0, j0 := rb*gemmRowBlock, pn*panelWidth
	i1, nc := min(j.m, i0+gemmRowBlock), min(panelWidth, j.n-j0)
	k, ldc, ldb := j.k, j.ldc, j.ldb
	k0, k1 := 0, k
	if j.tri&LowerC != 0 {
		if j0 > i1-1 {
			return
		}
		i0 = max(i0, j0)
	}
	if j.tri&LowerA != 0 {
		k1 = min(k1, i1)
	}
	if j.tri&UpperA != 0 {
		k0 = max(k0, min(k, i0))
	}
	if j.tri&LowerB != 0 {
		k0 = max(k0, min(k, j0))
	}
	if j.tri&UpperB != 0 {
		k1 = min(k1, j0+nc)
	}
	cc := j.c[i0*ldc+j0:]
	if k1 <= k0 {
		if !j.acc {
			for i := 0; i < i1-i0; i++ {
				clear(cc[i*ldc : i*ldc+nc])
			}
		}
		return
	}
	bp, ldbp := j.b[j0:], ldb
	if pn >= j.packFrom {
		bp, ldbp = j.p.panel(pn), panelWidth
	}
	// A long transposed reduction (dW = X^T dY: k = the batch's positions)
	// in chunks of gemmKChunk, each over all the tile's rows: a whole panel
	// of B (k x 64, a MiB at k = 4,096) does not fit in L2 and was read
	// again for every 6 rows (measured 1.3-1.5x faster on the dW shapes of
	// d_model 128 and 256; chunking A read by rows, as at 2048^3, ran 10-15%
	// slower, so only a transposed A is chunked). The kernels keep one
	// accumulator per element of C and continue from C in modeAcc, so the
	// chunks sum in the order of one call, bit for bit
	// (TestGemmKChunksBitwise).
	if j.tri&(LowerC|LowerA|UpperA) == 0 {
		j.rows(cc, bp, ldbp, i0, i1-i0, k0, k1, nc)
		return
	}
	// The structure inside the tile, one micro-kernel's rows at a time
	// (the heights mmAsm would use): a row group's reduction starts at its
	// first row (UpperA) or stops after its last (LowerA), and the left
	// half of a 64-column panel suffices for rows left of its middle
	// (LowerC). The terms skipped multiply structural zeros, so each
	// element's sum is the one the whole tile makes (adding 0 to it is
	// exact); on PaTH's 64 x 64 blocks a row block of 48 did up to twice the
	// needed work.
	w := panelWidth
	if nc <= panelWidth/2 {
		w = panelWidth / 2
	}
	for s, r := 0, 0; s < i1-i0; s += r {
		r = rowTile(i1-i0, w, s)
		g0, g1 := k0, k1
		if j.tri&UpperA != 0 {
			g0 = max(g0, min(k, i0+s))
		}
		if j.tri&LowerA != 0 {
			g1 = min(g1, i0+s+r)
		}
		ncg := nc
		if j.tri&LowerC != 0 && nc == panelWidth && i0+s+r-1 < j0+panelWidth/2 {
			ncg = panelWidth / 2
		}
		if g1 <= g0 {
			if !j.acc {
				for i := s; i < s+r; i++ {
					clear(cc[i*ldc : i*ldc+ncg])
				}
			}
			continue
		}
		j.rows(cc[s*ldc:], bp, ldbp, i0+s, r, g0, g1, ncg)
	}
}

// rows runs the product of m rows of op(A) from row i0 over the reduction
// [k0, k1) into c (the tile's first nc columns at those rows).
func (j *gemmTiles) rows(c, bp []float32, ldbp, i0, m, k0, k1, nc int) {
	lda, ldc := j.lda, j.ldc
	step := k1 - k0
	if j.inPlaceT && step >= gemmKChunkFrom {
		step = gemmKChunk
	}
	for kk := k0; kk < k1; kk += step {
		n, acc := min(step, k1-kk), j.acc || kk > k0
		if j.inPlaceT {
			gemmPanelT(c, ldc, j.a[kk*lda+i0:], lda, bp[kk*ldbp:], ldbp, m, n, nc, acc)
		} else {
			gemmPanel(c, ldc, j.a[i0*lda+kk:], lda, bp[kk*ldbp:], ldbp, m, n, nc, acc)
		}
	}
}

// gemmKChunk is the reduction length of one pass of a tile over its rows
// (a 64-wide panel's chunk: 64 KiB, in L2 with the A columns it meets),
// for transposed reductions of at least gemmKChunkFrom.
const gemmKChunk, gemmKChunkFrom = 256, 1024

func orDense(ld, cols int) int {
	if ld == 0 {
		return cols
	}
	return ld
}

// scratch holds the packed panels and transposed operands of Gemm calls
// between uses: a training step makes thousands of products, and fresh
// buffers for each were a tenth of its time in allocation and GC. Contents
// never carry over (every user overwrites what it reads).
var scratch sync.Pool

func getScratch(n int) *[]float32 {
	if b, ok := scratch.Get().(*[]float32); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]float32, n)
	return &b
}

func putScratch(b *[]float32) { scratch.Put(b) }

// inPlaceBMinK is the reduction length from which Gemm reads a
// non-transposed B's full panels in place instead of packing them.
const inPlaceBMinK = 1024

// inPlaceBMaxLd is the widest row stride of B that Gemm reads in place.
const inPlaceBMaxLd = 512

// inPlaceBMaxSmall is the largest k x ldb span (floats) of a B that Gemm
// reads in place whatever its k: 32 KiB, in L1 beside the A rows.
const inPlaceBMaxSmall = 8192

// packInto fills p's panels from number from on (zero-padded past column n)
// from b (k x n at stride ldb) or, when bt, from its transpose (n x k at
// stride ldb), the panels split over workers.
func packInto(p *packedB, b []float32, ldb int, bt bool, from, workers int) {
	np := p.npanels()
	if workers == 1 || np-from <= 1 || p.k*p.n < 1<<15 {
		for t := from; t < np; t++ {
			packPanel(p, b, ldb, bt, t)
		}
		return
	}
	pc := *p // the closure's copy (same panels): p itself stays off the heap
	parallelFor(np-from, workers, func(t int) { packPanel(&pc, b, ldb, bt, t+from) })
}

// packPanel fills panel t of p.
func packPanel(p *packedB, b []float32, ldb int, bt bool, t int) {
	k, n := p.k, p.n
	dst := p.panel(t)
	j0 := t * panelWidth
	w := min(panelWidth, n-j0)
	if bt {
		transposeInto(dst, panelWidth, b[j0*ldb:], ldb, w, k, 1)
	} else {
		for kk := 0; kk < k; kk++ {
			copy(dst[kk*panelWidth:kk*panelWidth+w], b[kk*ldb+j0:kk*ldb+j0+w])
		}
	}
	if w < panelWidth {
		for kk := 0; kk < k; kk++ {
			clear(dst[kk*panelWidth+w : (kk+1)*panelWidth])
		}
	}
}

// Transpose writes the transpose of x (rows x cols, row-major) into dst
// (cols x rows), allocating dst when it is too short, and returns it.
func Transpose(dst, x []float32, rows, cols int) []float32 {
	if len(dst) < rows*cols {
		dst = make([]float32, rows*cols)
	}
	transposeInto(dst, rows, x, cols, rows, cols, 1)
	return dst[:rows*cols]
}

// TransposeInto sets dst[j*ldd+i] = x[i*ldx+j] for i < rows, j < cols on
// the calling goroutine (Transpose with leading dimensions: a block of
// the evaluator's transposed keys).
func TransposeInto(dst []float32, ldd int, x []float32, ldx, rows, cols int) {
	transposeInto(dst, ldd, x, ldx, rows, cols, 1)
}

// transposeInto sets dst[j*ldd+i] = x[i*ldx+j] for i < rows, j < cols, in
// 8 x 8 blocks (the fixed-size arrays let the compiler drop the bounds
// checks), bands of 64 rows split over workers. Within a band the blocks
// go down a column strip first, so the strip's 8 destination rows take 64
// contiguous floats each: going along a row first wrote 8 floats into
// each of cols destination rows a power-of-two stride apart, which all
// fall in one cache set (measured 4 ns a float).
func transposeInto(dst []float32, ldd int, x []float32, ldx, rows, cols, workers int) {
	nb := (rows + 63) / 64
	if workers == 1 || nb == 1 || rows*cols < 1<<15 {
		for b := 0; b < nb; b++ {
			transposeBand(dst, ldd, x, ldx, rows, cols, b)
		}
		return
	}
	parallelFor(nb, workers, func(b int) { transposeBand(dst, ldd, x, ldx, rows, cols, b) })
}

// transposeBand is transposeInto's band b (rows [64 b, 64 b + 64)).
func transposeBand(dst []float32, ldd int, x []float32, ldx, rows, cols, b int) {
	r0, r1 := b*64, min(rows, (b+1)*64)
	full := r0 + (r1-r0)&^7
	j := 0
	if nblk := (full - r0) / 8; haveAsm && nblk > 0 {
		for ; j+8 <= cols; j += 8 {
			transpose8Asm(dst[j*ldd+r0:], ldd, x[r0*ldx+j:], ldx, nblk)
		}
	}
	for ; j+8 <= cols; j += 8 {
		for i := r0; i < full; i += 8 {
			var blk [8][8]float32
			for r := range 8 {
				blk[r] = *(*[8]float32)(x[(i+r)*ldx+j:])
			}
			for c := range 8 {
				d := (*[8]float32)(dst[(j+c)*ldd+i:])
				for r := range 8 {
					d[r] = blk[r][c]
				}
			}
		}
	}
	for ; j < cols; j++ {
		for i := r0; i < full; i++ {
			dst[j*ldd+i] = x[i*ldx+j]
		}
	}
	for i := full; i < r1; i++ {
		for j := 0; j < cols; j++ {
			dst[j*ldd+i] = x[i*ldx+j]
		}
	}
}

// ParallelFor runs body(0..n-1) on up to workers goroutines (<= 0:
// GOMAXPROCS). Results that must not depend on the schedule should write
// disjoint outputs per index.
func ParallelFor(n, workers int, body func(i int)) { parallelFor(n, workers, body) }

// GELU applies the tanh form of GELU in place (the assembly kernel where
// available): the same function as the evaluator's MLP.
func GELU(x []float32) { geluTanh(x) }

package native

// The exported matrix product: the packed sgemm of this package for the
// native trainer (model/nativetrain), with the transposed operands of a
// backward pass (dX = dY W^T, dW = X^T dY).
//
// Determinism: every element of C is computed by exactly one task, which
// runs the whole K reduction in one fixed order through the same
// micro-kernel, so the result is bitwise the same whatever the number of
// workers and the thread timing (TestMatMulWorkerIndependent).

// MatMul sets c = op(a) op(b), or adds it to c when acc. All matrices are
// dense row-major: c is m x n; op(a) is m x k, stored as a (m x k) or, when
// ta, as its transpose (k x m); op(b) is k x n, stored as b (k x n) or, when
// tb, as its transpose (n x k). workers <= 0 means GOMAXPROCS; 1 runs on the
// calling goroutine (for callers that parallelise over many small products).
func MatMul(c, a, b []float32, m, k, n int, ta, tb, acc bool, workers int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if !acc {
			clear(c[:m*n])
		}
		return
	}
	_, _, _ = c[m*n-1], a[m*k-1], b[k*n-1]
	if ta {
		a = Transpose(nil, a, k, m)
	}
	var p *packedB
	if tb {
		p = packBT(b, n, k)
	} else {
		p = packB(b, k, n)
	}
	rowBlocks := (m + gemmRowBlock - 1) / gemmRowBlock
	panels := p.npanels()
	tasks := rowBlocks * panels
	if workers == 1 || tasks == 1 {
		gemm(c, n, a, k, p, m, acc)
		return
	}
	// Tasks are (row block, panel) pairs, so that products with few rows
	// (dW = X^T dY has only D rows) still split over the cores.
	parallelFor(tasks, workers, func(t int) {
		rb, pn := t/panels, t%panels
		i0, j0 := rb*gemmRowBlock, pn*panelWidth
		mm := min(gemmRowBlock, m-i0)
		gemmPanel(c[i0*n+j0:], n, a[i0*k:], k, p.panel(pn), mm, k, min(panelWidth, n-j0), acc)
	})
}

// Transpose writes the transpose of x (rows x cols, row-major) into dst
// (cols x rows), allocating dst when it is too short, and returns it.
func Transpose(dst, x []float32, rows, cols int) []float32 {
	if len(dst) < rows*cols {
		dst = make([]float32, rows*cols)
	}
	const tile = 32
	for i0 := 0; i0 < rows; i0 += tile {
		for j0 := 0; j0 < cols; j0 += tile {
			for i := i0; i < min(i0+tile, rows); i++ {
				src := x[i*cols : (i+1)*cols]
				for j := j0; j < min(j0+tile, cols); j++ {
					dst[j*rows+i] = src[j]
				}
			}
		}
	}
	return dst[:rows*cols]
}

// packBT packs the transpose of bt (n x k, row-major), i.e. B = bt^T
// (k x n), into panels without materialising B.
func packBT(bt []float32, n, k int) *packedB {
	p := &packedB{k: k, n: n}
	np := p.npanels()
	p.panels = make([]float32, np*k*panelWidth)
	for t := 0; t < np; t++ {
		dst := p.panel(t)
		j0 := t * panelWidth
		for j := j0; j < min(j0+panelWidth, n); j++ {
			row := bt[j*k : (j+1)*k]
			for kk, v := range row {
				dst[kk*panelWidth+j-j0] = v
			}
		}
	}
	return p
}

// ParallelFor runs body(0..n-1) on up to workers goroutines (<= 0:
// GOMAXPROCS). Results that must not depend on the schedule should write
// disjoint outputs per index.
func ParallelFor(n, workers int, body func(i int)) { parallelFor(n, workers, body) }

// GELU applies the tanh form of GELU in place (the assembly kernel where
// available): the same function as the evaluator's MLP.
func GELU(x []float32) { geluTanh(x) }

package native

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// sgemm: B packed once into column panels of panelWidth (zero-padded), A
// read in place, register tiles from the micro-kernels (assembly 6x64,
// archsimd 4x32 or portable 4x4), row blocks handed to workers from an
// atomic counter. Measured, [1024x128]x[128x384] on both (shared) cores:
// portable 7.7, archsimd 4x4-vector (spilling) 63, archsimd 4x2-vector 164,
// assembly 6x64 100-150 GFLOP/s under load from other jobs.
//
// No K blocking: the model's K is at most a few thousand, so a packed panel
// (K x 64 floats) stays in L2.

// panelWidth is the number of B columns one micro-kernel call covers: four
// 16-wide vectors.
const panelWidth = 64

// gemmRowBlock is how many rows of A one task covers: enough work to amortise
// scheduling, small enough that both cores get balanced shares, and a
// multiple of the 6-row kernels.
const gemmRowBlock = 48

// packedB is a K x N matrix rearranged into ceil(N/64) panels of K x 64.
type packedB struct {
	k, n   int
	panels []float32
}

func (p *packedB) panel(t int) []float32 {
	sz := p.k * panelWidth
	return p.panels[t*sz : (t+1)*sz]
}

func (p *packedB) npanels() int { return (p.n + panelWidth - 1) / panelWidth }

// packB packs row-major b (k x n).
func packB(b []float32, k, n int) *packedB {
	p := &packedB{k: k, n: n}
	np := p.npanels()
	p.panels = make([]float32, np*k*panelWidth)
	for t := 0; t < np; t++ {
		dst := p.panel(t)
		j0 := t * panelWidth
		w := min(panelWidth, n-j0)
		for kk := 0; kk < k; kk++ {
			copy(dst[kk*panelWidth:kk*panelWidth+w], b[kk*n+j0:kk*n+j0+w])
		}
	}
	return p
}

// gemm computes c (m x n, leading dimension ldc) = a (m x k, lda) * b, or
// adds to c when acc, on the calling goroutine.
func gemm(c []float32, ldc int, a []float32, lda int, b *packedB, m int, acc bool) {
	for t := 0; t < b.npanels(); t++ {
		j0 := t * panelWidth
		gemmPanel(c[j0:], ldc, a, lda, b.panel(t), panelWidth, m, b.k, min(panelWidth, b.n-j0), acc)
	}
}

// gemmParallel is gemm split over row blocks on up to workers goroutines.
func gemmParallel(c []float32, ldc int, a []float32, lda int, b *packedB, m int, acc bool, workers int) {
	nb := (m + gemmRowBlock - 1) / gemmRowBlock
	parallelFor(nb, workers, func(blk int) {
		i0 := blk * gemmRowBlock
		mm := min(gemmRowBlock, m-i0)
		gemm(c[i0*ldc:], ldc, a[i0*lda:], lda, b, mm, acc)
	})
}

// parallelFor runs body(0..n-1) on min(workers, n) goroutines that take
// indices from a shared counter (dynamic scheduling: tasks may be unequal).
func parallelFor(n, workers int, body func(i int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			body(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				body(i)
			}
		})
	}
	wg.Wait()
}

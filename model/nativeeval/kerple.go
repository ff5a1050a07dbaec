package nativeeval

import (
	"routebench/model/native"
	"routebench/modelspec"
)

// kerpleTables returns one layer's KERPLE bias tables for a window of L
// positions: head h's modelspec.KerpleTable(p_h, a_h, L, blockK) at
// [h*(L+blockK), (h+1)*(L+blockK)), in dst when it is large enough. The
// score block of queries i0.. against keys j0.. then adds a slice of the
// table per row (attnShape.scores), as ALiBi adds its ramp, instead of a
// log1p per score. Built per layer and pass: O(H L) log1p against the
// attention's O(H L^2 d); each head's table is written by one worker, so
// the result is the same for any worker count.
func kerpleTables(dst, p, a []float32, L, workers int) []float32 {
	n := L + blockK
	if cap(dst) < len(p)*n {
		dst = make([]float32, len(p)*n)
	}
	dst = dst[:len(p)*n]
	native.ParallelFor(len(p), workers, func(h int) {
		copy(dst[h*n:(h+1)*n], modelspec.KerpleTable(float64(p[h]), float64(a[h]), L, blockK))
	})
	return dst
}

//go:build openblas && cgo

package openblas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import "unsafe"

// Available reports whether the OpenBLAS half was built in.
const Available = true

// SetThreads sets OpenBLAS's thread count (process-wide).
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// Sgemm sets c = op(a) op(b) with the layout of native.MatMul: row-major,
// dense, op(a) M x K (stored K x M when ta), op(b) K x N (stored N x K when tb).
func Sgemm(c, a, b []float32, m, k, n int, ta, tb bool) {
	transA, lda := uint32(C.CblasNoTrans), k
	if ta {
		transA, lda = uint32(C.CblasTrans), m
	}
	transB, ldb := uint32(C.CblasNoTrans), n
	if tb {
		transB, ldb = uint32(C.CblasTrans), k
	}
	C.cblas_sgemm(C.CblasRowMajor, transA, transB, C.blasint(m), C.blasint(n), C.blasint(k), 1,
		(*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda), (*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb), 0,
		(*C.float)(unsafe.Pointer(&c[0])), C.blasint(n))
}

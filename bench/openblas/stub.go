//go:build !(openblas && cgo)

package openblas

// Available reports whether the OpenBLAS half was built in: not without
// -tags openblas and cgo.
const Available = false

// SetThreads is a no-op without OpenBLAS.
func SetThreads(int) {}

// Sgemm panics without OpenBLAS: the benchmarks skip before calling it.
func Sgemm(c, a, b []float32, m, k, n int, ta, tb bool) {
	panic("openblas: built without -tags openblas (and cgo): rebuild with them, after apt-get install libopenblas-dev")
}

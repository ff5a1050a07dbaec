//go:build !(goexperiment.simd && amd64)

package native

// Without GOEXPERIMENT=simd the vector kernels do not exist; these stubs are
// never reached because simdAvailable reports false.

func simdAvailable() bool { return false }

func qkBlockSIMD(s, q, kt []float32, nq, d, bk int)    { panic("native: no SIMD kernels") }
func pvBlockSIMD(o, p, v []float32, nq, d, bk, nk int) { panic("native: no SIMD kernels") }
func expShiftSIMD(x []float32, m float32) float32      { panic("native: no SIMD kernels") }
func maxOfSIMD(x []float32) float32                    { panic("native: no SIMD kernels") }
func gemmPanelSIMD(c []float32, ldc int, a []float32, lda int, bp []float32, m, k, nc int, acc bool) {
	panic("native: no SIMD kernels")
}

func addRampSIMD(x []float32, base, slope float32) { panic("native: no SIMD kernels") }
func geluSIMD(x []float32)                         { panic("native: no SIMD kernels") }
func scaleRowsSIMD(o, f []float32, n, d int)       { panic("native: no SIMD kernels") }

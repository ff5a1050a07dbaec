//go:build !amd64 || purego

package native

// Without amd64 assembly (other architectures, or -tags purego) these are
// never called: only the portable set runs.

func avx512Available() bool { return false }
func avx2Available() bool   { return false }

func whyNot(kernelSet) string {
	return "this build has no amd64 assembly (not amd64, or -tags purego)"
}

func expShiftAsm(x []float32, m float32) float32 { panic("native: no assembly kernels") }
func maxOfAsm(x []float32) float32               { panic("native: no assembly kernels") }

const (
	modeSet   = 0
	modeAcc   = 1
	modeScale = 2
)

func mmAsm(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, w, mode int, scale []float32) {
	panic("native: no assembly kernels")
}

func mmAsmT(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, w, mode int, scale []float32) {
	panic("native: no assembly kernels")
}

func geluTanhAsm(u, bias, th, g []float32) int                  { panic("native: no assembly kernels") }
func geluAsm(x []float32) int                                   { panic("native: no assembly kernels") }
func addRampAsm(x []float32, base, slope float32)               { panic("native: no assembly kernels") }
func softmaxRowsAsm(s []float32, nq int, m, l, f, rs []float32) { panic("native: no assembly kernels") }

func scaleMaxAsm(x []float32, s float32) float32        { panic("native: no assembly kernels") }
func scaleAsm(x []float32, s float32)                   { panic("native: no assembly kernels") }
func addOffsetsAsm(x []float32, a float32, b []float32) { panic("native: no assembly kernels") }
func addAsm(x, y []float32)                             { panic("native: no assembly kernels") }
func softmaxGradAsm(ds, p []float32, rd, s float32)     { panic("native: no assembly kernels") }
func mulAsm(dst, x, y []float32)                        { panic("native: no assembly kernels") }
func addMulAsm(dst, a, b []float32)                     { panic("native: no assembly kernels") }
func normScaleAsm(nr, ar, x, g []float32, r float32)    { panic("native: no assembly kernels") }
func normGradAsm(xr, nr, res []float32, r, dot float32) { panic("native: no assembly kernels") }
func rotPairsAsm(u, cos, sin []float32, sign float32)   { panic("native: no assembly kernels") }
func rotRowsAsm(dst []float32, ldd int, src []float32, lds int, cs []float32, ldc, rows, n int, scale float32, inverse bool) {
	panic("native: no assembly kernels")
}
func geluGradMulAsm(du, u, th []float32) { panic("native: no assembly kernels") }
func transpose8Asm(dst []float32, ldd int, src []float32, lds, nblk int) {
	panic("native: no assembly kernels")
}
func negAbsAsm(dst, y []float32)         { panic("native: no assembly kernels") }
func siluFinishAsm(w, sg, y []float32)   { panic("native: no assembly kernels") }
func siluGradMulAsm(dy, y, sg []float32) { panic("native: no assembly kernels") }

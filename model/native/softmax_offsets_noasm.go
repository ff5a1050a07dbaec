//go:build !amd64 || purego

package native

func softmaxRowsOffAsm(sc []float32, nq int, a, b []float32, m, l, f, rs []float32) {
	panic("native: no assembly kernels")
}

func softmaxRowsEntOffAsm(sc []float32, nq int, a, b []float32, m, l, f, rs, ent []float32) {
	panic("native: no assembly kernels")
}

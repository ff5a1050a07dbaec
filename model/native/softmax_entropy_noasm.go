//go:build !amd64 || purego

package native

func softmaxRowsEntAsm(sc []float32, nq int, m, l, f, rs, ent []float32) {
	panic("native: no assembly kernels")
}

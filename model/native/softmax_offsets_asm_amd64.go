//go:build amd64 && !purego

package native

// softmaxRowsOffAVX512 and softmaxRowsEntOffAVX512 (kern_amd64.s,
// gen_kern_amd64.go's softmaxRows with off) are softmaxRowsAVX512 and
// softmaxRowsEntAVX512 that first add a[r] + b[j] to each score.
//
//go:noescape
func softmaxRowsOffAVX512(s *float32, nq int, m *float32, rs *float32, d *float32, a *float32, b *float32, consts *[12]float32)

//go:noescape
func softmaxRowsEntOffAVX512(s *float32, nq int, m *float32, rs *float32, d *float32, ent *float32, a *float32, b *float32, consts *[12]float32)

func softmaxRowsOffAsm(sc []float32, nq int, a, b []float32, m, l, f, rs []float32) {
	_, _, _, _, _ = sc[nq*64-1], m[nq-1], l[nq-1], f[len(f)-1], rs[nq-1]
	if useAVX2 {
		softmaxRowsOffAVX2(&sc[0], nq, &m[0], &rs[0], &f[0], &a[0], &b[0], softmaxAVX2)
	} else {
		softmaxRowsOffAVX512(&sc[0], nq, &m[0], &rs[0], &f[0], &a[0], &b[0], &softmaxExpConsts)
	}
	rescaleSums(nq, l, f, rs)
}

func softmaxRowsEntOffAsm(sc []float32, nq int, a, b []float32, m, l, f, rs, ent []float32) {
	_, _, _, _, _, _ = sc[nq*64-1], m[nq-1], l[nq-1], f[len(f)-1], rs[nq-1], ent[nq-1]
	if useAVX2 {
		softmaxRowsEntOffAVX2(&sc[0], nq, &m[0], &rs[0], &f[0], &ent[0], &a[0], &b[0], softmaxAVX2)
	} else {
		softmaxRowsEntOffAVX512(&sc[0], nq, &m[0], &rs[0], &f[0], &ent[0], &a[0], &b[0], &softmaxExpConsts)
	}
	rescaleSums(nq, l, f, rs)
}

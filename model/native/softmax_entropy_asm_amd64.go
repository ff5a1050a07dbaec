//go:build amd64 && !purego

package native

// softmaxRowsEntAVX512 (kern_amd64.s, gen_kern_amd64.go's softmaxRowsEnt)
// is softmaxRowsAVX512 that also writes each row's entropy numerator to ent.
//
//go:noescape
func softmaxRowsEntAVX512(s *float32, nq int, m *float32, rs *float32, d *float32, ent *float32, consts *[12]float32)

func softmaxRowsEntAsm(sc []float32, nq int, m, l, f, rs, ent []float32) {
	_, _, _, _, _, _ = sc[nq*64-1], m[nq-1], l[nq-1], f[len(f)-1], rs[nq-1], ent[nq-1]
	if useAVX2 {
		softmaxRowsEntAVX2(&sc[0], nq, &m[0], &rs[0], &f[0], &ent[0], softmaxAVX2)
	} else {
		softmaxRowsEntAVX512(&sc[0], nq, &m[0], &rs[0], &f[0], &ent[0], &softmaxExpConsts)
	}
	rescaleSums(nq, l, f, rs)
}

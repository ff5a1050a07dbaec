package native

// The online-softmax step of scores that carry per-row and per-key offsets:
// PaTH-FoX's forgetting gate adds (G_i - G_j) scale to each score, split as
// (G_i - G_ref) scale + (G_ref - G_j) scale so that both parts stay small in
// float32 (model/nativeeval, householder_attention.go). Adding them inside
// the softmax step's one call per block replaces a Go call per row.

// OnlineSoftmaxOffsets64 is OnlineSoftmax64 of the scores plus offsets:
// each s[r][j] first becomes s[r][j] + (a[r] + b[j]), as AddOffsets on
// every row would make it (the same bits), for nq rows of 64 scores and the
// block's 64 key terms b.
func OnlineSoftmaxOffsets64(sc []float32, nq int, a, b []float32, m, l, f, rs []float32) {
	if nq <= 0 {
		return
	}
	_, _ = a[nq-1], b[63]
	if haveAsm {
		softmaxRowsOffAsm(sc, nq, a, b, m, l, f, rs)
		return
	}
	softmaxRowsLanes(sc, nq, m, rs, f, nil, a, b)
	rescaleSums(nq, l, f, rs)
}

// OnlineSoftmaxEntropyOffsets64 is OnlineSoftmaxEntropy64 of the scores
// plus offsets (as OnlineSoftmaxOffsets64).
func OnlineSoftmaxEntropyOffsets64(sc []float32, nq int, a, b []float32, m, l, f, rs, ent []float32) {
	if nq <= 0 {
		return
	}
	_, _, _ = a[nq-1], b[63], ent[nq-1]
	if haveAsm {
		softmaxRowsEntOffAsm(sc, nq, a, b, m, l, f, rs, ent)
		return
	}
	softmaxRowsLanes(sc, nq, m, rs, f, ent, a, b)
	rescaleSums(nq, l, f, rs)
}

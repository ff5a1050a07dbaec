package native

// The online-softmax step with the entropy numerator of each row, for the
// evaluator's attention diagnostics (model/nativeeval, diag.go). Its
// entropy = log l - E / l needs E = sum_j e_j (s_j - m) under the running
// max m; computing each block's share inside the softmax step, where s_j
// and e_j are both in registers, spares the copy of the score block before
// the exp and the second (scalar) pass over it after.

// OnlineSoftmaxEntropy64 is OnlineSoftmax64 that also sets, for each of the
// nq rows, ent[r] = sum_j e_j (s_j - m_new[r]) over the row's 64 scores
// (e_j = exp(s_j - m_new), the new contents of sc). Entries whose e_j is 0
// (masked -Inf scores, or scores so far below the max that exp underflows)
// add exactly 0; a row of only -Inf scores gets 0.
func OnlineSoftmaxEntropy64(sc []float32, nq int, m, l, f, rs, ent []float32) {
	if nq <= 0 {
		return
	}
	_ = ent[nq-1]
	if haveAsm {
		softmaxRowsEntAsm(sc, nq, m, l, f, rs, ent)
		return
	}
	softmaxRowsLanes(sc, nq, m, rs, f, ent, nil, nil)
	rescaleSums(nq, l, f, rs)
}

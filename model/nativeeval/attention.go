package nativeeval

import (
	"math"

	"routebench/model/native"
)

// Streaming causal attention (FlashAttention-style).
//
// Layout: each head's queries, keys and values are copied once per layer
// into head-major buffers (queries pre-rotated and pre-scaled by 1/sqrt(d),
// keys rotated and transposed per key block so that a block of scores is a
// broadcast-FMA product, values rotated for value transport). A work item is
// one head and up to groupQ consecutive query blocks; it walks the key blocks
// left of the diagonal once for all of them, each query block keeping a
// running row max m, row sum l and an unnormalised output O (online
// softmax), so memory is O(L x d) per layer and never L x L, and each key and
// value block comes from memory once per group. Work items are taken
// largest first from a shared counter, which balances the triangular
// (causal) costs across cores.
//
// Version v9; each version's idea and measured speed are in
// docs/performance-history.md.

const (
	blockQ = 48 // query rows per work item: a multiple of the 6-row kernels
	blockK = 64 // keys per block: a multiple of 64 (the QK^T kernel width); 128 measured no faster
)

// attnShape is what the attention of one layer needs besides the data.
type attnShape struct {
	L, H, d  int
	cs       []float32 // [L][H][d/2][2] cos, sin of the rotation angle; nil: no rotation
	valueRot bool      // value transport (needs cs)
	slopes   []float32 // ALiBi slope per head; nil: no bias
	// kerple is this layer's KERPLE bias, per head a table by reversed
	// distance, [H][L+blockK] (kerpleTables); nil: no bias.
	kerple []float32
}

func (s *attnShape) nkb() int  { return (s.L + blockK - 1) / blockK }
func (s *attnShape) lpad() int { return s.nkb() * blockK }

// headBufs holds one layer's head-major attention inputs.
type headBufs struct {
	q  []float32 // [H][L][d], rotated and scaled by 1/sqrt(d)
	kt []float32 // [H][nkb][d][blockK], rotated, zero-padded
	v  []float32 // [H][nkb*blockK][d], rotated when valueRot, zero-padded
}

func newHeadBufs(s *attnShape) *headBufs {
	n := s.H * s.lpad() * s.d
	return &headBufs{q: make([]float32, s.H*s.L*s.d), kt: make([]float32, n), v: make([]float32, n)}
}

// scatterRows copies rows [row0, row0+n) of q, k, v (each [n][H*d] with
// leading dimension ld) into the head buffers, rotating them. Head by head,
// the keys of each key block's run of rows are rotated into a row-major
// scratch and transposed into kt with the 8 x 8 kernel: one scalar store per
// element, 256 bytes apart, had been a tenth of the attention at L = 4,096.
func (b *headBufs) scatterRows(s *attnShape, row0, n int, q, k, v []float32, ld int) {
	d, L, nkb, lp := s.d, s.L, s.nkb(), s.lpad()
	scale := float32(1 / math.Sqrt(float64(d)))
	krp := keyRows.get(d)
	defer keyRows.put(krp)
	kr := *krp
	for h := 0; h < s.H; h++ {
		for r0 := 0; r0 < n; { // one key block's run of rows at a time
			i0 := row0 + r0
			kb, jr0 := i0/blockK, i0%blockK
			nr := min(n-r0, blockK-jr0)
			kt := b.kt[(h*nkb+kb)*d*blockK+jr0:]
			q0, v0 := b.q[(h*L+i0)*d:], b.v[(h*lp+i0)*d:]
			src := r0*ld + h*d
			if s.cs == nil {
				for r := 0; r < nr; r++ {
					copy(q0[r*d:(r+1)*d], q[src+r*ld:])
					copy(v0[r*d:(r+1)*d], v[src+r*ld:])
				}
				native.Scale(q0[:nr*d], scale)
				native.TransposeInto(kt, blockK, k[src:], ld, nr, d)
			} else {
				cs, ldc := s.cs[(i0*s.H+h)*d:], s.H*d
				native.RotateRows(q0, d, q[src:], ld, cs, ldc, nr, d, scale)
				native.RotateRows(kr, d, k[src:], ld, cs, ldc, nr, d, 1)
				if s.valueRot {
					native.RotateRows(v0, d, v[src:], ld, cs, ldc, nr, d, 1)
				} else {
					for r := 0; r < nr; r++ {
						copy(v0[r*d:(r+1)*d], v[src+r*ld:])
					}
				}
				native.TransposeInto(kt, blockK, kr, d, nr, d)
			}
			r0 += nr
		}
	}
}

// keyRows holds one key block's rotated keys, row-major, before scatterRows
// transposes them.
// A pointer, so that putting it back allocates nothing (a slice in an
// interface is boxed).
var keyRows = newScratchPool(func(d int) *[]float32 { x := make([]float32, blockK*d); return &x },
	func(x *[]float32, d int) bool { return len(*x) == blockK*d })

// attnScratch is one worker's memory: a score block and the running state.
type attnScratch struct {
	sc    []float32  // [blockQ][blockK] scores, then probabilities
	o     []float32  // [blockQ][d] unnormalised output
	m, l  []float32  // running row max and sum
	f     []float32  // per-row rescale factors
	rs    []float32  // per-row sums of one block
	stats *headDiag  // the diagnostics' destination; nil without them
	diag  *diagState // their running sums (softmaxStep)
	// offA[r] + offB[j] joins score [r][j] in the softmax step when offB
	// is set (PaTH-FoX's gate, pathBlock); nil for every other variant.
	offA, offB []float32
}

func newAttnScratch(d int) *attnScratch {
	return &attnScratch{
		sc: make([]float32, blockQ*blockK), o: make([]float32, blockQ*d),
		m: make([]float32, blockQ), l: make([]float32, blockQ), f: make([]float32, blockQ), rs: make([]float32, blockQ),
	}
}

// scores fills sc with the masked, biased scores of query rows [i0, i0+nq)
// of head h against key block kb.
func (b *headBufs) scores(s *attnShape, w *attnScratch, h, i0, nq, kb int) {
	d := s.d
	j0 := kb * blockK
	native.QKBlock(w.sc, b.q[(h*s.L+i0)*d:], b.kt[(h*s.nkb()+kb)*d*blockK:], nq, d, blockK)
	if s.slopes != nil {
		slope := s.slopes[h]
		for r := 0; r < nq; r++ {
			native.AddRamp(w.sc[r*blockK:(r+1)*blockK], float32(j0-(i0+r)), slope)
		}
	}
	if s.kerple != nil {
		// Query i against keys j0.. reads its head's table from
		// L-1-i+j0 on: bias(i-j) up to the query, pad zeros past it (masked
		// below). Rows before the block's first key are masked whole and
		// skipped: they would read past the pad.
		n := s.L + blockK
		rev := s.kerple[h*n : (h+1)*n]
		for r := max(0, j0-i0); r < nq; r++ {
			o := s.L - 1 - (i0 + r) + j0
			native.Add(w.sc[r*blockK:(r+1)*blockK], rev[o:o+blockK])
		}
	}
	if j0+blockK-1 > i0 { // the block reaches past some query: causal mask
		maskFrom(w.sc, nq, i0-j0+1)
	}
}

// maskFrom sets scores [r][j] with j >= r + c to -Inf, for the rows r < nq
// of a score block: the causal mask of a block whose first key is c - 1
// positions before its first query.
func maskFrom(sc []float32, nq, c int) {
	for r := 0; r < nq; r++ {
		if j := max(0, r+c); j < blockK {
			copy(sc[r*blockK+j:(r+1)*blockK], negInfRow[j:])
		}
	}
}

// negInfRow is a score row of -Inf, the source of maskFrom's copies (a
// scalar store per masked score was 2% of the attention at L = 4,096).
var negInfRow = func() (x [blockK]float32) {
	for j := range x {
		x[j] = float32(math.Inf(-1))
	}
	return x
}()

// beginBlock resets w's running state for nq query rows of d values.
func beginBlock(w *attnScratch, nq, d int) {
	ninf := float32(math.Inf(-1))
	for r := range w.m {
		w.m[r], w.l[r], w.f[r] = ninf, 0, ninf // rows >= nq stay inert
	}
	clear(w.o[:nq*d])
	startDiag(w, nq)
}

// stepBlock takes query rows [i0, i0+nq) of head h through key block kb:
// scores, the online-softmax step, and the probabilities times values.
func (b *headBufs) stepBlock(s *attnShape, w *attnScratch, h, i0, nq, kb int) {
	d := s.d
	b.scores(s, w, h, i0, nq, kb)
	softmaxStep(w, i0, nq, kb*blockK)
	nk := min(blockK, i0+nq-kb*blockK)
	vb := b.v[(h*s.lpad()+kb*blockK)*d:]
	if kb == 0 {
		native.PVBlock(w.o, w.sc, vb, nq, d, blockK, nk)
	} else {
		native.PVBlockScaled(w.o, w.sc, vb, nq, d, blockK, nk, w.f)
	}
}

// finishBlock writes the normalised (and, for value transport, un-rotated)
// output rows [i0, i0+nq) of head h into out ([L][H*d]), and with w.stats
// set the diagnostics of those rows.
func (b *headBufs) finishBlock(s *attnShape, w *attnScratch, h, i0, nq int, out []float32) {
	d, D := s.d, s.H*s.d
	for r := 0; r < nq; r++ {
		native.Scale(w.o[r*d:(r+1)*d], 1/w.l[r])
	}
	dst := out[i0*D+h*d:]
	if s.valueRot { // R(-psi_i) o
		native.UnrotateRows(dst, D, w.o, d, s.cs[(i0*s.H+h)*d:], s.H*d, nq, d, 1)
	} else {
		for r := 0; r < nq; r++ {
			copy(dst[r*D:r*D+d], w.o[r*d:(r+1)*d])
		}
	}
	finishDiag(w, i0, nq)
}

// attendGroup runs one work item: query blocks [qb0, qb0+len(ws)) of head
// h, each with its own scratch, walking the key blocks once for all of
// them, so that each key and value block is read from memory once per
// group and then from cache. Every query block meets the key blocks in the
// same order with the same operations as alone: grouping changes no bit.
func (b *headBufs) attendGroup(s *attnShape, ws []*attnScratch, h, qb0 int, out []float32) {
	i0s, nqs := [groupQ]int{}, [groupQ]int{}
	last := 0
	for g, w := range ws {
		i0s[g] = (qb0 + g) * blockQ
		nqs[g] = min(blockQ, s.L-i0s[g])
		beginBlock(w, nqs[g], s.d)
		last = (i0s[g] + nqs[g] - 1) / blockK
	}
	for kb := 0; kb <= last; kb++ {
		for g, w := range ws {
			if kb*blockK <= i0s[g]+nqs[g]-1 {
				b.stepBlock(s, w, h, i0s[g], nqs[g], kb)
			}
		}
	}
	for g, w := range ws {
		b.finishBlock(s, w, h, i0s[g], nqs[g], out)
	}
}

// onlineSoftmax turns the score block (plus the offsets, when w.offB is
// set) into exp(s - m_new) and updates the running max m, sum l and
// rescale factors f of each row.
func onlineSoftmax(w *attnScratch, nq int) {
	if w.offB != nil {
		native.OnlineSoftmaxOffsets64(w.sc, nq, w.offA, w.offB, w.m, w.l, w.f, w.rs)
		return
	}
	native.OnlineSoftmax64(w.sc, nq, w.m, w.l, w.f, w.rs)
}

// groupQ is the most query blocks a work item takes through the key
// blocks together (attendGroup).
const groupQ = 4

// attend runs the attention of one layer on all work items.
func (b *headBufs) attend(s *attnShape, out []float32, workers int, diag *layerDiag) {
	nqb := (s.L + blockQ - 1) / blockQ
	ng := (nqb + groupQ - 1) / groupQ
	n := s.H * ng
	native.ParallelFor(n, workers, func(t int) {
		// Largest first: item t is group ng-1-t/H of head t%H; the groups
		// are counted from the end, so a short group is the first one.
		h, gr := t%s.H, ng-1-t/s.H
		qb1 := nqb - (ng-1-gr)*groupQ
		qb0 := max(0, qb1-groupQ)
		var ws [groupQ]*attnScratch
		for g := range qb1 - qb0 {
			w := attnScratches.get(s.d)
			w.stats = nil
			if diag != nil {
				w.stats = &diag.heads[h]
			}
			ws[g] = w
		}
		b.attendGroup(s, ws[:qb1-qb0], h, qb0, out)
		for _, w := range ws[:qb1-qb0] {
			attnScratches.put(w)
		}
	})
}

// attnScratches keeps the workers' scratch (beginBlock resets the running
// state, the diagnostics clear their sums).
var attnScratches = newScratchPool(newAttnScratch, func(w *attnScratch, d int) bool { return len(w.o) == blockQ*d })

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
// one (head, query block); it walks the key blocks left of the diagonal
// keeping a running row max m, row sum l and an unnormalised output O
// (online softmax), so memory is O(L x d) per layer and never L x L.
// Work items are taken largest first from a shared counter, which balances
// the triangular (causal) costs across cores.
//
// Version v6; each version's idea and measured speed are in
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
// leading dimension ld) into the head buffers, rotating them.
func (b *headBufs) scatterRows(s *attnShape, row0, n int, q, k, v []float32, ld int) {
	d, P, L := s.d, s.d/2, s.L
	scale := float32(1 / math.Sqrt(float64(d)))
	for r := 0; r < n; r++ {
		i := row0 + r
		kb := i / blockK
		jr := i - kb*blockK // column inside the transposed key block
		for h := 0; h < s.H; h++ {
			qi, ki, vi := q[r*ld+h*d:r*ld+h*d+d], k[r*ld+h*d:r*ld+h*d+d], v[r*ld+h*d:r*ld+h*d+d]
			qo := b.q[(h*L+i)*d : (h*L+i)*d+d]
			kto := b.kt[(h*s.nkb()+kb)*d*blockK:]
			vo := b.v[(h*s.lpad()+i)*d : (h*s.lpad()+i)*d+d]
			if s.cs == nil {
				for c := 0; c < d; c++ {
					qo[c] = qi[c] * scale
					kto[c*blockK+jr] = ki[c]
				}
				copy(vo, vi)
				continue
			}
			cs := s.cs[(i*s.H+h)*d : (i*s.H+h)*d+d]
			for p := 0; p < P; p++ {
				c, sn := cs[2*p], cs[2*p+1]
				q0, q1 := qi[2*p], qi[2*p+1]
				qo[2*p], qo[2*p+1] = (q0*c-q1*sn)*scale, (q0*sn+q1*c)*scale
				k0, k1 := ki[2*p], ki[2*p+1]
				kto[2*p*blockK+jr], kto[(2*p+1)*blockK+jr] = k0*c-k1*sn, k0*sn+k1*c
				if s.valueRot {
					v0, v1 := vi[2*p], vi[2*p+1]
					vo[2*p], vo[2*p+1] = v0*c-v1*sn, v0*sn+v1*c
				}
			}
			if !s.valueRot {
				copy(vo, vi)
			}
		}
	}
}

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
	if j0+blockK-1 > i0 { // the block reaches past some query: causal mask
		ninf := float32(math.Inf(-1))
		for r := 0; r < nq; r++ {
			row := w.sc[r*blockK : (r+1)*blockK]
			for j := max(0, i0+r-j0+1); j < blockK; j++ {
				row[j] = ninf
			}
		}
	}
}

// attendBlock runs one work item: query block qb of head h, writing the
// normalised (and, for value transport, un-rotated) output rows into out
// ([L][H*d]), and with w.stats set the diagnostics of its rows.
func (b *headBufs) attendBlock(s *attnShape, w *attnScratch, h, qb int, out []float32) {
	d, D := s.d, s.H*s.d
	i0 := qb * blockQ
	nq := min(blockQ, s.L-i0)
	ninf := float32(math.Inf(-1))
	for r := range w.m {
		w.m[r], w.l[r], w.f[r] = ninf, 0, ninf // rows >= nq stay inert
	}
	clear(w.o[:nq*d])
	startDiag(w, nq)
	last := (i0 + nq - 1) / blockK
	for kb := 0; kb <= last; kb++ {
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
	for r := 0; r < nq; r++ {
		i := i0 + r
		inv := 1 / w.l[r]
		o := w.o[r*d : (r+1)*d]
		dst := out[i*D+h*d : i*D+h*d+d]
		if !s.valueRot {
			for c := range dst {
				dst[c] = o[c] * inv
			}
			continue
		}
		cs := s.cs[(i*s.H+h)*d : (i*s.H+h)*d+d]
		for p := 0; p < d/2; p++ { // R(-psi_i) o
			c, sn := cs[2*p], cs[2*p+1]
			o0, o1 := o[2*p]*inv, o[2*p+1]*inv
			dst[2*p], dst[2*p+1] = o0*c+o1*sn, -o0*sn+o1*c
		}
	}
	finishDiag(w, i0, nq)
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

// attend runs the attention of one layer on all work items.
func (b *headBufs) attend(s *attnShape, out []float32, workers int, diag *layerDiag) {
	nqb := (s.L + blockQ - 1) / blockQ
	n := s.H * nqb
	native.ParallelFor(n, workers, func(t int) {
		// Largest first: item t is query block nqb-1-t/H of head t%H.
		h, qb := t%s.H, nqb-1-t/s.H
		w := attnScratches.get(s.d)
		w.stats = nil
		if diag != nil {
			w.stats = &diag.heads[h]
		}
		b.attendBlock(s, w, h, qb, out)
		attnScratches.put(w)
	})
}

// attnScratches keeps the workers' scratch (attendBlock resets the running
// state, the diagnostics clear their sums).
var attnScratches = newScratchPool(newAttnScratch, func(w *attnScratch, d int) bool { return len(w.o) == blockQ*d })

package tokenize

import (
	"container/heap"
	"fmt"
	"slices"
)

// Held-out rules recorded in the manifest (ManifestHeldOut.Rule).
const (
	HeldOutByFiles    = "files"           // all documents of the files named in HeldOut
	HeldOutByFraction = "fraction"        // the ValFraction rule alone held out enough
	HeldOutByTopUp    = "fraction+top-up" // further documents by ascending hash, up to MinHeldOutTokens
	HeldOutAll        = "all"             // Config.EvalOnly: every document (an evaluation corpus)
)

// candidate is a training document that the top-up may hold out.
type candidate struct {
	hash   uint64 // docHash: the top-up order
	ord    int    // position in corpus order: breaks ties of equal ids
	tokens int64  // end-of-document token included
}

func (a candidate) before(b candidate) bool {
	return a.hash < b.hash || (a.hash == b.hash && a.ord < b.ord)
}

// candidates keeps the training documents that come first in top-up order
// and hold at least need tokens together (all of them if they hold fewer):
// the top-up never reaches past them, because it stops once need tokens are
// held out. Bounding the set keeps a large corpus's first pass from
// remembering every document.
type candidates struct {
	need int64
	sum  int64
	h    candHeap // max-heap in top-up order: the last candidate on top
}

func (c *candidates) add(d candidate) {
	if c.need <= 0 {
		return
	}
	if c.sum >= c.need && c.h[0].before(d) {
		return // comes after a set that already suffices
	}
	heap.Push(&c.h, d)
	c.sum += d.tokens
	for len(c.h) > 1 && c.sum-c.h[0].tokens >= c.need {
		c.sum -= heap.Pop(&c.h).(candidate).tokens
	}
}

type candHeap []candidate

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return h[j].before(h[i]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// topUp is the second pass's assignment: documents (by corpus position)
// that the top-up holds out, and the document whose tail it holds out.
type topUp struct {
	whole     map[int]bool
	splitOrd  int   // -1: no document is split
	splitTail int64 // tokens of the split document held out (its end-of-document token included)
	splitLen  int64 // all its tokens, as the first pass counted them
	tokens    int64 // tokens held out whole by the top-up
}

// planTopUp chooses what to hold out beyond the ValFraction rule's choice
// (held tokens, train tokens left) so that the held-out split reaches
// MinHeldOutTokens while the train split keeps MinTrainTokens. Documents go
// whole in ascending hash order; the first one that cannot go whole
// without leaving train too short gives only its last tokens (it is always
// longer than those: see the proof in the comment below).
func (st *runState) planTopUp(held, train int64) (topUp, error) {
	needH, needT := st.cfg.MinHeldOutTokens, st.cfg.MinTrainTokens
	if total := held + train; total < needH+needT {
		return topUp{}, fmt.Errorf("corpus: %d documents hold %d tokens (%s tokenizer, end-of-document tokens included), "+
			"but the held-out split needs %d (MinHeldOutTokens) and the train split %d (MinTrainTokens), %d in all; "+
			"give a corpus with at least %d more tokens, or lower the requirement (the pipeline derives both from the training context T)",
			st.documents, total, st.tok.name, needH, needT, needH+needT, needH+needT-total)
	}
	cands := slices.Clone(st.cands.h)
	slices.SortFunc(cands, func(a, b candidate) int {
		if a.before(b) {
			return -1
		}
		return 1
	})
	p := topUp{whole: map[int]bool{}, splitOrd: -1}
	for _, c := range cands {
		if held >= needH {
			break
		}
		if train-c.tokens >= needT {
			p.whole[c.ord] = true
			p.tokens += c.tokens
			held, train = held+c.tokens, train-c.tokens
			continue
		}
		// Cut c: hold out its last needH-held tokens. They are fewer than
		// c.tokens (train-c.tokens < needT <= total-needH = train-(needH-held)),
		// so a head of at least one token stays in train, and train keeps
		// train-(needH-held) = total-needH >= needT tokens.
		p.splitOrd, p.splitTail, p.splitLen = c.ord, needH-held, c.tokens
		held = needH
		break
	}
	if held < needH { // the candidates cover needH tokens or all of train, so this cannot happen
		return topUp{}, fmt.Errorf("tokenize: internal error: the held-out top-up reached %d of %d tokens; please report it", held, needH)
	}
	return p, nil
}

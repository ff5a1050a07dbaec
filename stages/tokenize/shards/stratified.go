package shards

import (
	"fmt"
	"slices"

	"routebench/internal/seeds"
)

// Span is a window's place in the held-out split: its first token's offset
// in the split's stream, its L+1 tokens, and the document it lies in.
type Span struct {
	Doc    string `json:"doc"`
	Offset int64  `json:"offset"`
	Tokens int64  `json:"tokens"`
}

// overlaps reports whether [off, off+n) meets s.
func (s Span) overlaps(off, n int64) bool { return off < s.Offset+s.Tokens && s.Offset < off+n }

// EvalWindowsStratified returns n non-overlapping windows of L+1 held-out
// tokens spread over the documents, and where each lies. The documents
// long enough for a window are put in an order drawn from the seed, and
// window i goes to document i mod (their count); a document that gets k
// windows is cut into k equal segments, and its j-th window is drawn
// uniformly inside segment j. So with at least n long documents every
// window is a different document (the held-out text is not one or two
// books), and no window overlaps another. It is an error when a
// document's segments are shorter than a window: hold out more documents
// or ask for fewer windows.
func (d *Dataset) EvalWindowsStratified(seed uint64, L, n int) ([][]int32, []Span, error) {
	if L <= 0 || n < 0 {
		return nil, nil, fmt.Errorf("shards: EvalWindowsStratified(L %d, n %d): L must be positive and n >= 0", L, n)
	}
	t, err := d.Tokens(SplitHeldOut)
	if err != nil {
		return nil, nil, err
	}
	docs, err := d.Documents(SplitHeldOut)
	if err != nil {
		return nil, nil, err
	}
	type ranked struct {
		doc  Document
		rank uint64
	}
	var long []ranked
	for _, doc := range docs {
		if doc.Tokens >= int64(L)+1 {
			long = append(long, ranked{doc, seeds.Stream(seed, seeds.StratifiedWindows, hashString(doc.ID))})
		}
	}
	if len(long) == 0 && n > 0 {
		return nil, nil, fmt.Errorf("shards: no held-out document has the %d tokens a stratified window of L=%d needs; hold out longer documents or evaluate shorter windows", L+1, L)
	}
	slices.SortFunc(long, func(a, b ranked) int {
		if a.rank != b.rank {
			if a.rank < b.rank {
				return -1
			}
			return 1
		}
		if a.doc.ID < b.doc.ID {
			return -1
		}
		return 1
	})
	out := make([][]int32, n)
	spans := make([]Span, n)
	for i := range n {
		doc := long[i%len(long)].doc
		k := int64(n / len(long)) // windows in this document
		if i%len(long) < n%len(long) {
			k++
		}
		j := int64(i / len(long)) // this window's segment
		seg := doc.Tokens / k
		if seg < int64(L)+1 {
			return nil, nil, fmt.Errorf("shards: %d stratified windows of L=%d over %d held-out documents put %d in %s (%d tokens), whose segments of %d tokens are shorter than a window; hold out more or longer documents, or ask for fewer windows",
				n, L, len(long), k, doc.ID, doc.Tokens, seg)
		}
		off := doc.Start + j*seg + int64(seeds.Below(seeds.Stream(seed, seeds.StratifiedWindows, uint64(L), uint64(i)), uint64(seg-int64(L))))
		out[i] = make([]int32, L+1)
		if err := t.Read(out[i], off); err != nil {
			return nil, nil, err
		}
		spans[i] = Span{Doc: doc.ID, Offset: off, Tokens: int64(L) + 1}
	}
	return out, spans, nil
}

// EvalWindowsAvoiding is EvalWindows with every window redrawn (from the
// seed and an attempt count) while it overlaps one of avoid, so that
// windows of one length are independent of another length's windows (the
// paper ratio's baseline at T beside the stratified 128T windows).
func (d *Dataset) EvalWindowsAvoiding(seed uint64, L, n int, avoid []Span) ([][]int32, error) {
	if L <= 0 || n < 0 {
		return nil, fmt.Errorf("shards: EvalWindowsAvoiding(L %d, n %d): L must be positive and n >= 0", L, n)
	}
	t, err := d.Tokens(SplitHeldOut)
	if err != nil {
		return nil, err
	}
	if t.n < int64(L)+1 {
		return nil, fmt.Errorf("shards: the held-out split has %d tokens, an evaluation window of L=%d needs %d; hold out more text or evaluate shorter windows", t.n, L, L+1)
	}
	const maxAttempts = 10000
	starts := uint64(t.n - int64(L))
	out := make([][]int32, n)
	for i := range n {
		off := int64(-1)
		for a := uint64(0); a < maxAttempts && off < 0; a++ {
			h := seeds.Stream(seed, seeds.EvalWindows, uint64(L), uint64(i))
			if a > 0 {
				h = seeds.Stream(seed, seeds.EvalWindows, uint64(L), uint64(i), a)
			}
			o := int64(seeds.Below(h, starts))
			if !slices.ContainsFunc(avoid, func(s Span) bool { return s.overlaps(o, int64(L)+1) }) {
				off = o
			}
		}
		if off < 0 {
			return nil, fmt.Errorf("shards: window %d of L=%d found no place outside the %d avoided spans in %d draws; the held-out split (%d tokens) is nearly covered by them", i, L, len(avoid), maxAttempts, t.n)
		}
		out[i] = make([]int32, L+1)
		if err := t.Read(out[i], off); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// hashString folds a document ID into a hash key (FNV-1a).
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

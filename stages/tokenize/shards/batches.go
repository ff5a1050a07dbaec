package shards

import (
	"fmt"
	"sort"

	"routebench/internal/seeds"
)

// Tokens is one split's token stream: the shards' token arrays in order,
// viewed in place (no copy). Each shard is one part, either uint16 or int32.
type Tokens struct {
	parts []tokenPart
	n     int64
	eot   int32
}

type tokenPart struct {
	start int64
	u16   []uint16
	i32   []int32
}

func (p tokenPart) len() int {
	if p.u16 != nil {
		return len(p.u16)
	}
	return len(p.i32)
}

// Len is the number of tokens in the stream.
func (t *Tokens) Len() int64 { return t.n }

// EOT is the end-of-document id that separates documents in the stream.
func (t *Tokens) EOT() int32 { return t.eot }

// At returns token i of the stream.
func (t *Tokens) At(i int64) int32 {
	p := t.parts[t.part(i)]
	if p.u16 != nil {
		return int32(p.u16[i-p.start])
	}
	return p.i32[i-p.start]
}

// Read copies tokens [off, off+len(dst)) of the stream into dst, across
// shard boundaries.
func (t *Tokens) Read(dst []int32, off int64) error {
	if off < 0 || off+int64(len(dst)) > t.n {
		return fmt.Errorf("shards: reading tokens [%d, %d) of a stream of %d", off, off+int64(len(dst)), t.n)
	}
	for len(dst) > 0 {
		p := t.parts[t.part(off)]
		i := int(off - p.start)
		n := min(len(dst), p.len()-i)
		if p.u16 != nil {
			for k, v := range p.u16[i : i+n] {
				dst[k] = int32(v)
			}
		} else {
			copy(dst[:n], p.i32[i:i+n])
		}
		dst = dst[n:]
		off += int64(n)
	}
	return nil
}

// Uint16Parts returns the stream's shards as zero-copy uint16 slices, in
// order, or nil if the tokens are stored as int32.
func (t *Tokens) Uint16Parts() [][]uint16 {
	var out [][]uint16
	for _, p := range t.parts {
		if p.u16 == nil {
			return nil
		}
		out = append(out, p.u16)
	}
	return out
}

// Int32Parts returns the stream's shards as zero-copy int32 slices, in
// order, or nil if the tokens are stored as uint16.
func (t *Tokens) Int32Parts() [][]int32 {
	var out [][]int32
	for _, p := range t.parts {
		if p.i32 == nil {
			return nil
		}
		out = append(out, p.i32)
	}
	return out
}

// part returns the index of the part holding token i.
func (t *Tokens) part(i int64) int {
	return sort.Search(len(t.parts), func(k int) bool { return t.parts[k].start+int64(t.parts[k].len()) > i })
}

// TrainBatch returns batch sequences of T tokens from the training stream,
// flattened row-major (batch*T), and their next-token targets (the same
// windows shifted by one). Sequence b starts at an offset drawn uniformly
// from [0, len-T-1] by hashing (seed, step, b), so a batch depends only on
// its arguments and the data: resuming at step k replays exactly, and no
// state is shared between calls. Sequences may span documents (they then
// contain the end-of-document id), as in nanoGPT.
func (d *Dataset) TrainBatch(seed uint64, step, batch, T int) (inputs, targets []int32, err error) {
	if batch <= 0 || T <= 0 || step < 0 {
		return nil, nil, fmt.Errorf("shards: TrainBatch(step %d, batch %d, T %d): step must be >= 0, batch and T positive", step, batch, T)
	}
	t, err := d.Tokens(SplitTrain)
	if err != nil {
		return nil, nil, err
	}
	if t.n < int64(T)+1 {
		return nil, nil, fmt.Errorf("shards: the training split has %d tokens, a sequence of T=%d needs %d", t.n, T, T+1)
	}
	inputs = make([]int32, batch*T)
	targets = make([]int32, batch*T)
	window := make([]int32, T+1)
	starts := uint64(t.n - int64(T))
	for b := range batch {
		off := int64(seeds.Below(seeds.Stream(seed, seeds.TrainBatches, uint64(step), uint64(b)), starts))
		if err := t.Read(window, off); err != nil {
			return nil, nil, err
		}
		copy(inputs[b*T:(b+1)*T], window[:T])
		copy(targets[b*T:(b+1)*T], window[1:])
	}
	return inputs, targets, nil
}

// EvalWindows returns n windows of L+1 consecutive held-out tokens: L inputs
// and, shifted by one, L next-token targets. Window i starts at an offset
// drawn uniformly from [0, len-L-1] by hashing (seed, L, i), so every model
// evaluated with the same (seed, L, n) on the same shards sees the same
// windows, and asking for more windows keeps the first ones. Windows may
// span documents, as in nanoGPT's validation stream.
func (d *Dataset) EvalWindows(seed uint64, L, n int) ([][]int32, error) {
	if L <= 0 || n < 0 {
		return nil, fmt.Errorf("shards: EvalWindows(L %d, n %d): L must be positive and n >= 0", L, n)
	}
	t, err := d.Tokens(SplitHeldOut)
	if err != nil {
		return nil, err
	}
	if t.n < int64(L)+1 {
		return nil, fmt.Errorf("shards: the held-out split has %d tokens, an evaluation window of L=%d needs %d; hold out more text (tokenize.Config HeldOut, ValFraction) or evaluate shorter windows",
			t.n, L, L+1)
	}
	starts := uint64(t.n - int64(L))
	out := make([][]int32, n)
	for i := range n {
		off := int64(seeds.Below(seeds.Stream(seed, seeds.EvalWindows, uint64(L), uint64(i)), starts))
		out[i] = make([]int32, L+1)
		if err := t.Read(out[i], off); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// EvalWindowsInDocuments is EvalWindows restricted to windows that lie inside
// one held-out document (its end-of-document id may be the last target), so
// that all L tokens of context belong to the text being predicted. That suits
// the Gutenberg corpus, whose held-out books are each longer than the longest
// window; with OpenWebText (~1K tokens per document) long windows must span
// documents and EvalWindows is the protocol. Start offsets are uniform over
// all valid positions of all long-enough documents, drawn by hashing
// (seed, L, i) as in EvalWindows.
func (d *Dataset) EvalWindowsInDocuments(seed uint64, L, n int) ([][]int32, error) {
	if L <= 0 || n < 0 {
		return nil, fmt.Errorf("shards: EvalWindowsInDocuments(L %d, n %d): L must be positive and n >= 0", L, n)
	}
	t, err := d.Tokens(SplitHeldOut)
	if err != nil {
		return nil, err
	}
	docs, err := d.Documents(SplitHeldOut)
	if err != nil {
		return nil, err
	}
	// spans[k] holds the valid start offsets [lo, lo+count) of document k;
	// cum[k] counts the valid starts before it.
	type span struct{ lo, count int64 }
	var spans []span
	var cum []int64
	var total, longest int64
	for _, doc := range docs {
		longest = max(longest, doc.Tokens)
		if c := doc.Tokens - int64(L); c > 0 {
			spans = append(spans, span{doc.Start, c})
			cum = append(cum, total)
			total += c
		}
	}
	if total == 0 {
		return nil, fmt.Errorf("shards: no held-out document has the %d tokens an evaluation window of L=%d needs (longest: %d); use EvalWindows, which spans documents, or hold out longer documents",
			L+1, L, longest)
	}
	out := make([][]int32, n)
	for i := range n {
		r := int64(seeds.Below(seeds.Stream(seed, seeds.EvalWindows, uint64(L), uint64(i)), uint64(total)))
		k := sort.Search(len(cum), func(k int) bool { return cum[k] > r }) - 1
		out[i] = make([]int32, L+1)
		if err := t.Read(out[i], spans[k].lo+r-cum[k]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

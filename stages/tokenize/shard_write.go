package tokenize

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"routebench/stages/tokenize/shards"
)

// batchTokens is the most tokens per record batch: a shard's buffer is a
// list of such chunks, reused from shard to shard, instead of one slice of
// ShardTokens (zeroing and growing that cost more than the bytes tokenizer).
const batchTokens = 1 << 20

// splitWriter cuts one split's token stream into shards. A full shard is
// written only when the next token arrives, so the last shard of the split
// is always known when it is written and can say so (keyLast); readers use
// that to notice a missing tail.
type splitWriter struct {
	dir         string
	meta        shards.ShardMeta // common fields filled in; per-shard fields set at flush
	shardTokens int
	chunkTokens int

	// The shard being filled, in chunks of chunkTokens in its storage type
	// (one of the two lists is used); spare chunks are kept for reuse.
	u16, spare16 [][]uint16
	i32, spare32 [][]int32
	n            int               // tokens buffered
	ended        []shards.DocEntry // documents whose last token is in the buffer
	start        int64             // split offset of the buffer's first token

	docs    int
	written []shards.ManifestShard
}

func newSplitWriter(dir, split string, common shards.DatasetMeta, shardTokens int) *splitWriter {
	return &splitWriter{dir: dir, meta: shards.ShardMeta{DatasetMeta: common, Split: split},
		shardTokens: shardTokens, chunkTokens: min(shardTokens, batchTokens)}
}

// total is the length of the split stream so far.
func (w *splitWriter) total() int64 { return w.start + int64(w.n) }

func (w *splitWriter) add(toks []uint32) error {
	for len(toks) > 0 {
		if w.n == w.shardTokens {
			if err := w.flush(false); err != nil {
				return err
			}
		}
		k := min(len(toks), w.shardTokens-w.n)
		if w.meta.TokenType == "uint16" {
			w.u16 = appendChunked(w.u16, &w.spare16, toks[:k], w.chunkTokens, func(t uint32) uint16 { return uint16(t) })
		} else {
			w.i32 = appendChunked(w.i32, &w.spare32, toks[:k], w.chunkTokens, func(t uint32) int32 { return int32(t) })
		}
		w.n += k
		toks = toks[k:]
	}
	return nil
}

// appendChunked appends toks to the chunk list, taking new chunks from spare
// when the last one is full.
func appendChunked[T uint16 | int32](chunks [][]T, spare *[][]T, toks []uint32, size int, conv func(uint32) T) [][]T {
	for len(toks) > 0 {
		if len(chunks) == 0 || len(chunks[len(chunks)-1]) == size {
			var c []T
			if n := len(*spare); n > 0 {
				c, *spare = (*spare)[n-1][:0], (*spare)[:n-1]
			} else {
				c = make([]T, 0, size)
			}
			chunks = append(chunks, c)
		}
		last := &chunks[len(chunks)-1]
		k := min(len(toks), size-len(*last))
		for _, t := range toks[:k] {
			*last = append(*last, conv(t))
		}
		toks = toks[k:]
	}
	return chunks
}

// endDoc records a document whose tokens, end-of-document id included, have
// all been added.
func (w *splitWriter) endDoc(e shards.DocEntry) {
	w.ended = append(w.ended, e)
	w.docs++
}

// finish writes the last shard. A split without tokens has no shards.
func (w *splitWriter) finish() error {
	if w.n == 0 {
		return nil
	}
	return w.flush(true)
}

func (w *splitWriter) flush(last bool) error {
	m := w.meta
	m.Index = len(w.written)
	m.Start = w.start
	m.Tokens = int64(w.n)
	m.Last = last
	docs, err := shards.MarshalDocs(w.ended)
	if err != nil {
		return fmt.Errorf("tokenize: shard metadata: %w", err)
	}
	m.Documents = docs
	schema := m.Schema()

	// The arrays borrow the chunks (no copy); they are written before the
	// chunks are reused.
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, c := range w.u16 {
		col := array.NewUint16Data(array.NewData(arrow.PrimitiveTypes.Uint16, len(c),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Uint16Traits.CastToBytes(c))}, nil, 0, 0))
		recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{col}, int64(len(c))))
		col.Release()
	}
	for _, c := range w.i32 {
		col := array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, len(c),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(c))}, nil, 0, 0))
		recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{col}, int64(len(c))))
		col.Release()
	}

	name := fmt.Sprintf("%s-%05d.arrow", m.Split, m.Index)
	size, sum, err := writeIPC(filepath.Join(w.dir, name), schema, recs)
	if err != nil {
		return err
	}
	w.written = append(w.written, shards.ManifestShard{File: name, Index: m.Index, Start: m.Start, Tokens: m.Tokens, Bytes: size, SHA256: sum})
	w.start += m.Tokens
	w.n = 0
	w.spare16, w.u16 = append(w.spare16, w.u16...), w.u16[:0]
	w.spare32, w.i32 = append(w.spare32, w.i32...), w.i32[:0]
	w.ended = nil
	return nil
}

// writeIPC writes recs as an uncompressed Arrow IPC file (uncompressed so
// that readers can map it without copying) and returns its size and sha256.
func writeIPC(path string, schema *arrow.Schema, recs []arrow.RecordBatch) (int64, string, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, "", fmt.Errorf("tokenize: writing shard: %w", err)
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	iw, err := ipc.NewFileWriter(bw, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	for _, rec := range recs {
		if err == nil {
			err = iw.Write(rec)
		}
	}
	if iw != nil {
		if cerr := iw.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, "", fmt.Errorf("tokenize: writing shard %s: %w", path, err)
	}
	return cw.n, hex.EncodeToString(h.Sum(nil)), nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

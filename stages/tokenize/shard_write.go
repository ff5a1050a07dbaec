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
)

// splitWriter cuts one split's token stream into shards. A full shard is
// written only when the next token arrives, so the last shard of the split
// is always known when it is written and can say so (keyLast); readers use
// that to notice a missing tail.
type splitWriter struct {
	dir         string
	meta        shardMeta // common fields filled in; per-shard fields set at flush
	shardTokens int

	// The shard being filled, in its storage type (one of the two is used).
	// Its capacity is reserved up front: growing a multi-megabyte slice by
	// doubling cost a third of the bytes tokenizer's run time.
	u16   []uint16
	i32   []int32
	ended []docEntry // documents whose last token is in the buffer
	start int64      // split offset of the buffer's first token

	docs    int
	written []ManifestShard
}

func newSplitWriter(dir, split string, common datasetMeta, shardTokens int) *splitWriter {
	return &splitWriter{dir: dir, meta: shardMeta{datasetMeta: common, Split: split}, shardTokens: shardTokens}
}

func (w *splitWriter) buffered() int { return len(w.u16) + len(w.i32) }

// total is the length of the split stream so far.
func (w *splitWriter) total() int64 { return w.start + int64(w.buffered()) }

func (w *splitWriter) add(toks []uint32) error {
	for len(toks) > 0 {
		if w.buffered() == w.shardTokens {
			if err := w.flush(false); err != nil {
				return err
			}
		}
		n := min(len(toks), w.shardTokens-w.buffered())
		if w.meta.TokenType == "uint16" {
			if w.u16 == nil {
				w.u16 = make([]uint16, 0, min(w.shardTokens, 1<<26))
			}
			for _, t := range toks[:n] {
				w.u16 = append(w.u16, uint16(t))
			}
		} else {
			if w.i32 == nil {
				w.i32 = make([]int32, 0, min(w.shardTokens, 1<<25))
			}
			for _, t := range toks[:n] {
				w.i32 = append(w.i32, int32(t))
			}
		}
		toks = toks[n:]
	}
	return nil
}

// endDoc records a document whose tokens, end-of-document id included, have
// all been added.
func (w *splitWriter) endDoc(e docEntry) {
	w.ended = append(w.ended, e)
	w.docs++
}

// finish writes the last shard. A split without tokens has no shards.
func (w *splitWriter) finish() error {
	if w.buffered() == 0 {
		return nil
	}
	return w.flush(true)
}

func (w *splitWriter) flush(last bool) error {
	m := w.meta
	m.Index = len(w.written)
	m.Start = w.start
	m.Tokens = int64(w.buffered())
	m.Last = last
	docs, err := marshalDocs(w.ended)
	if err != nil {
		return fmt.Errorf("tokenize: shard metadata: %w", err)
	}
	m.Documents = docs

	// The array borrows the buffer (no copy); it is written before the
	// buffer is reused.
	var col arrow.Array
	if m.TokenType == "uint16" {
		col = array.NewUint16Data(array.NewData(arrow.PrimitiveTypes.Uint16, len(w.u16),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Uint16Traits.CastToBytes(w.u16))}, nil, 0, 0))
	} else {
		col = array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, len(w.i32),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(w.i32))}, nil, 0, 0))
	}
	defer col.Release()
	schema := m.schema()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()

	name := fmt.Sprintf("%s-%05d.arrow", m.Split, m.Index)
	size, sum, err := writeIPC(filepath.Join(w.dir, name), schema, rec)
	if err != nil {
		return err
	}
	w.written = append(w.written, ManifestShard{File: name, Index: m.Index, Start: m.Start, Tokens: m.Tokens, Bytes: size, SHA256: sum})
	w.start += m.Tokens
	w.u16, w.i32 = w.u16[:0], w.i32[:0]
	w.ended = nil
	return nil
}

// writeIPC writes rec as an uncompressed Arrow IPC file (uncompressed so
// that readers can map it without copying) and returns its size and sha256.
func writeIPC(path string, schema *arrow.Schema, rec arrow.RecordBatch) (int64, string, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, "", fmt.Errorf("tokenize: writing shard: %w", err)
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	iw, err := ipc.NewFileWriter(bw, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	if err == nil {
		err = iw.Write(rec)
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

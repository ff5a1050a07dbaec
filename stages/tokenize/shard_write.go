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

	buf   []uint32   // tokens of the shard being filled
	ended []docEntry // documents whose last token is in buf
	start int64      // split offset of buf[0]

	docs    int
	written []ManifestShard
	u16     []uint16 // conversion scratch, reused across shards
	i32     []int32
}

func newSplitWriter(dir, split string, common datasetMeta, shardTokens int) *splitWriter {
	return &splitWriter{dir: dir, meta: shardMeta{datasetMeta: common, Split: split}, shardTokens: shardTokens}
}

// total is the length of the split stream so far.
func (w *splitWriter) total() int64 { return w.start + int64(len(w.buf)) }

func (w *splitWriter) add(toks []uint32) error {
	for len(toks) > 0 {
		if len(w.buf) == w.shardTokens {
			if err := w.flush(false); err != nil {
				return err
			}
		}
		n := min(len(toks), w.shardTokens-len(w.buf))
		w.buf = append(w.buf, toks[:n]...)
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
	if len(w.buf) == 0 {
		return nil
	}
	return w.flush(true)
}

func (w *splitWriter) flush(last bool) error {
	m := w.meta
	m.Index = len(w.written)
	m.Start = w.start
	m.Tokens = int64(len(w.buf))
	m.Last = last
	docs, err := marshalDocs(w.ended)
	if err != nil {
		return fmt.Errorf("tokenize: shard metadata: %w", err)
	}
	m.Documents = docs

	var col arrow.Array
	if m.TokenType == "uint16" {
		w.u16 = w.u16[:0]
		for _, t := range w.buf {
			w.u16 = append(w.u16, uint16(t))
		}
		col = array.NewUint16Data(array.NewData(arrow.PrimitiveTypes.Uint16, len(w.u16),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Uint16Traits.CastToBytes(w.u16))}, nil, 0, 0))
	} else {
		w.i32 = w.i32[:0]
		for _, t := range w.buf {
			w.i32 = append(w.i32, int32(t))
		}
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
	w.start += int64(len(w.buf))
	w.buf = w.buf[:0]
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

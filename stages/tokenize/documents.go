package tokenize

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
)

// rawDoc is one document as read, before normalisation.
type rawDoc struct {
	id    string
	where string // the file or archive member, for errors
	text  []byte
	// file marks whole files and archive members: only those are checked for
	// binary content, since a stray NUL inside one JSON or Parquet value is
	// not a sign that the wrong file was given.
	file bool
	pos  int64 // bytes of the input file consumed so far, for progress
}

// readDocuments calls sink for each document of f, in file order. Errors name
// f (and the line, row or member) and wrap the cause.
func readDocuments(ctx context.Context, f inputFile, sink func(rawDoc) error) error {
	switch f.kind {
	case kindText:
		b, err := os.ReadFile(f.path)
		if err != nil {
			return fmt.Errorf("corpus: %w", err)
		}
		return sink(rawDoc{id: f.name, where: f.path, text: b, file: true, pos: int64(len(b))})
	case kindJSONL:
		return readJSONL(ctx, f, sink)
	case kindParquet:
		return readParquet(ctx, f, sink)
	case kindXZ:
		return readXZ(ctx, f, sink)
	}
	return fmt.Errorf("corpus: %s: unsupported file type", f.path)
}

// countingReader counts bytes read, for progress; the count is read from
// another goroutine.
type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

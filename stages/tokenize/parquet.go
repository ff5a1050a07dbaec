package tokenize

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// readParquet reads one document per row from the string column "text", the
// layout of Hugging Face's OpenWebText. Only that column is decoded. Null
// values are empty documents (skipped like any empty document).
func readParquet(ctx context.Context, f inputFile, sink func(rawDoc) error) (err error) {
	pf, err := file.OpenParquetFile(f.path, false)
	if err != nil {
		return fmt.Errorf("corpus: %s is not a readable Parquet file (corrupt or truncated?): %w", f.path, err)
	}
	defer pf.Close()
	// The Parquet decoder can panic on some corrupt pages; report that as the
	// file's error rather than crash the pipeline.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corpus: %s: corrupt Parquet data: %v", f.path, r)
		}
	}()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("corpus: %s: reading the Parquet schema: %w", f.path, err)
	}
	schema, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("corpus: %s: reading the Parquet schema: %w", f.path, err)
	}
	idx := schema.FieldIndices("text")
	if len(idx) == 0 {
		names := make([]string, 0, schema.NumFields())
		for _, fl := range schema.Fields() {
			names = append(names, fl.Name)
		}
		return fmt.Errorf("corpus: %s has no column \"text\" (columns: %s)", f.path, strings.Join(names, ", "))
	}
	switch t := schema.Field(idx[0]).Type.ID(); t {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
	default:
		return fmt.Errorf("corpus: %s: column \"text\" has type %s, want a string column", f.path, schema.Field(idx[0]).Type)
	}
	leaf := pf.MetaData().Schema.ColumnIndexByName("text")
	if leaf < 0 {
		return fmt.Errorf("corpus: %s: column \"text\" is not a top-level leaf column", f.path)
	}
	rr, err := fr.GetRecordReader(ctx, []int{leaf}, nil)
	if err != nil {
		return fmt.Errorf("corpus: %s: %w", f.path, err)
	}
	defer rr.Release()
	rows := pf.NumRows()
	row := int64(0)
	for {
		rec, err := rr.Read()
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("corpus: %s: reading rows from %d (corrupt file?): %w", f.path, row, err)
		}
		if rec == nil {
			break
		}
		col, ok := rec.Column(0).(interface {
			arrow.Array
			Value(int) string
		})
		if !ok {
			return fmt.Errorf("corpus: %s: column \"text\" decoded as %s, want strings", f.path, rec.Column(0).DataType())
		}
		for i := 0; i < col.Len(); i++ {
			var text []byte
			if col.IsValid(i) {
				// Copy: the record's buffers are reused after Release.
				text = []byte(col.Value(i))
			}
			pos := f.size
			if rows > 0 {
				pos = f.size * (row + 1) / rows
			}
			if err := sink(rawDoc{id: fmt.Sprintf("%s#%d", f.name, row), where: fmt.Sprintf("%s row %d", f.path, row), text: text, pos: pos}); err != nil {
				return err
			}
			row++
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	return nil
}

// Interface checks: the string array types readParquet accepts.
var (
	_ interface{ Value(int) string } = (*array.String)(nil)
	_ interface{ Value(int) string } = (*array.LargeString)(nil)
	_ interface{ Value(int) string } = (*array.StringView)(nil)
)

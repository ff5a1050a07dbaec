package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"routebench/artifacts"
)

// table is a typed, column-major table: the tidy tables' one shape,
// written as Parquet (the committed form) and read back from it, and
// written as CSV on demand (TablesToCSV). A null is explicit (column.nulls),
// never a sentinel value: null in Parquet, empty in the CSV.
type table struct {
	about string // the Parquet schema's routebench.table metadata
	cols  []column
}

// The column types a table holds.
var (
	tString  = arrow.BinaryTypes.String
	tUint64  = arrow.PrimitiveTypes.Uint64
	tInt64   = arrow.PrimitiveTypes.Int64
	tFloat64 = arrow.PrimitiveTypes.Float64
)

type column struct {
	name     string
	typ      arrow.DataType // tString, tUint64, tInt64 or tFloat64
	nullable bool
	s        []string
	u        []uint64
	i        []int64
	f        []float64
	nulls    []bool // one per row
}

func (c *column) str(v string, ok bool) {
	c.s = append(c.s, v)
	c.nulls = append(c.nulls, !ok)
}

func (c *column) u64(v uint64, ok bool) {
	c.u = append(c.u, v)
	c.nulls = append(c.nulls, !ok)
}

func (c *column) i64(v int64, ok bool) {
	c.i = append(c.i, v)
	c.nulls = append(c.nulls, !ok)
}

func (c *column) f64(v float64, ok bool) {
	c.f = append(c.f, v)
	c.nulls = append(c.nulls, !ok)
}

// text is row k's CSV cell: empty for a null; floats in Go's shortest
// round-trip form.
func (c *column) text(k int) string {
	if c.nulls[k] {
		return ""
	}
	switch c.typ {
	case tUint64:
		return strconv.FormatUint(c.u[k], 10)
	case tInt64:
		return strconv.FormatInt(c.i[k], 10)
	case tFloat64:
		return strconv.FormatFloat(c.f[k], 'g', -1, 64)
	}
	return c.s[k]
}

func (t *table) rows() int { return len(t.cols[0].nulls) }

// check refuses a table a reader would misread: columns of unequal
// length, a null in a required column.
func (t *table) check(path string) error {
	n := t.rows()
	for _, c := range t.cols {
		if len(c.nulls) != n || len(c.s)+len(c.u)+len(c.i)+len(c.f) != n {
			return fmt.Errorf("report: %s: column %s has %d values, column %s %d (a bug in the table's builder)", path, c.name, len(c.nulls), t.cols[0].name, n)
		}
		if c.nullable {
			continue
		}
		for k, null := range c.nulls {
			if null {
				return fmt.Errorf("report: %s: row %d has no %s, a required column (a bug in the table's builder)", path, k, c.name)
			}
		}
	}
	return nil
}

func writeCSVTable(path string, t *table) error {
	if err := t.check(path); err != nil {
		return err
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	rec := make([]string, len(t.cols))
	for k := range t.cols {
		rec[k] = t.cols[k].name
	}
	w.Write(rec)
	for i := range t.rows() {
		for k := range t.cols {
			rec[k] = t.cols[k].text(i)
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("report: encoding %s: %w", path, err)
	}
	return writeTableFile(path, buf.Bytes())
}

// parquetProps are the writer's settings for t: Zstandard-compressed
// pages (the encoder single-threaded, so the bytes are the same on every
// run), dictionaries for the columns that repeat (strings, integers),
// and the float columns byte-stream-split, each byte of the float64s
// stored together, which Zstandard packs far better (the cpu profile's
// 171,070 rows: 1.23 MB with dictionaries, 0.79 MB split); and a fixed
// created_by, so that the bytes depend on the rows only, not on the
// library's version string.
func parquetProps(t *table) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{parquet.WithCreatedBy("routebench report"),
		parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(true)}
	for _, c := range t.cols {
		if c.typ == tFloat64 {
			opts = append(opts, parquet.WithDictionaryFor(c.name, false), parquet.WithEncodingFor(c.name, parquet.Encodings.ByteStreamSplit))
		}
	}
	return parquet.NewWriterProperties(opts...)
}

func writeParquetTable(path string, t *table) error {
	if err := t.check(path); err != nil {
		return err
	}
	fields := make([]arrow.Field, len(t.cols))
	for k, c := range t.cols {
		fields[k] = arrow.Field{Name: c.name, Type: c.typ, Nullable: c.nullable}
	}
	md := arrow.NewMetadata([]string{"routebench.table"}, []string{t.about})
	schema := arrow.NewSchema(fields, &md)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for i := range t.rows() {
		for k := range t.cols {
			c := &t.cols[k]
			if c.nulls[i] {
				b.Field(k).AppendNull()
				continue
			}
			switch fb := b.Field(k).(type) {
			case *array.StringBuilder:
				fb.Append(c.s[i])
			case *array.Uint64Builder:
				fb.Append(c.u[i])
			case *array.Int64Builder:
				fb.Append(c.i[i])
			case *array.Float64Builder:
				fb.Append(c.f[i])
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(schema, &buf, parquetProps(t), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return fmt.Errorf("report: %s: %w", path, err)
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return fmt.Errorf("report: encoding %s: %w", path, err)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("report: encoding %s: %w", path, err)
	}
	return writeTableFile(path, buf.Bytes())
}

// readParquetTable reads a table writeParquetTable wrote (or any Parquet
// file of string, uint64, int64 and float64 columns).
func readParquetTable(path string) (*table, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("report: reading %s: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("report: reading %s: %w", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, fmt.Errorf("report: reading %s: %w", path, err)
	}
	defer tbl.Release()
	t := &table{}
	// The file's schema: ReadTable's drops the key-value metadata.
	if schema, err := fr.Schema(); err == nil {
		if v, ok := schema.Metadata().GetValue("routebench.table"); ok {
			t.about = v
		}
	}
	for k := range int(tbl.NumCols()) {
		f := tbl.Schema().Field(k)
		c := column{name: f.Name, typ: f.Type, nullable: f.Nullable}
		for _, chunk := range tbl.Column(k).Data().Chunks() {
			for i := range chunk.Len() {
				ok := !chunk.IsNull(i)
				switch a := chunk.(type) {
				case *array.String:
					c.str(a.Value(i), ok)
				case *array.Uint64:
					c.u64(a.Value(i), ok)
				case *array.Int64:
					c.i64(a.Value(i), ok)
				case *array.Float64:
					c.f64(a.Value(i), ok)
				default:
					return nil, fmt.Errorf("report: %s: column %s is %s; a tidy table holds only strings, uint64, int64 and float64", path, f.Name, f.Type)
				}
			}
		}
		t.cols = append(t.cols, c)
	}
	if len(t.cols) == 0 {
		return nil, fmt.Errorf("report: %s has no columns", path)
	}
	return t, nil
}

// writeTableFile writes a table's bytes atomically (a reader never sees
// half a table; artifacts.WriteFileAtomic).
func writeTableFile(path string, data []byte) error {
	if err := artifacts.WriteFileAtomic(path, data, 0o644); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	return nil
}

package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"routebench/modelspec"
	"routebench/stages/evaluate"
	"routebench/stats"
)

// The tidy results: every number the evaluate stages measured, one per
// row (long format), for a dataframe rather than for reading; results.csv
// keeps its wide per-length table. docs/interop.md documents the columns.
const (
	TidyCSVFile     = "results/" + tidyBase + ".csv"
	TidyParquetFile = "results/" + tidyBase + ".parquet"
)

// HeldOutCorpus is the corpus column's value for the training corpus's
// own held-out split (an evaluation corpus is named as --eval-corpus named it).
const HeldOutCorpus = "heldout"

// tidyRow is one measured value. Lo, Hi are NaN and Window is -1 where
// the row has none (empty in the CSV, null in Parquet).
type tidyRow struct {
	Point    string // a sweep point's label (TidySet.Sweep)
	Variant  string
	Seed     uint64
	Corpus   string
	Protocol string
	T, L     int
	Window   int
	Metric   string
	Value    float64
	Lo, Hi   float64
	Interval string // what [Lo, Hi] covers; empty without one
	Commit   string
}

var tidyColumns = []string{"variant", "seed", "corpus", "protocol", "T", "L", "window", "metric", "value", "lo", "hi", "interval", "commit"}

// What the intervals cover, as short codes (docs/interop.md): stats'
// Student-t interval at stats.Confidence over the unit named (Welch's for
// the windows at L and at T); or a range that is no confidence interval.
// A code is repeated on every row, so it is kept short.
var (
	ivWindows = fmt.Sprintf("t%g:windows", 100*stats.Confidence)             // this model's windows at L
	ivRatio   = fmt.Sprintf("welch%g:windows-L-and-T", 100*stats.Confidence) // the windows at L and at T, independently
	ivPaired  = fmt.Sprintf("t%g:window-prefix-pairs", 100*stats.Confidence) // windows as (whole window, its first T) pairs
	ivHeads   = "range:heads"                                                // smallest and largest per-(layer, head) mean
)

// TidyRun is one trained model as the tidy tables read it.
type TidyRun struct {
	Point   string // the sweep point's label (Point.Label); empty outside a sweep
	Variant string
	Seed    uint64
	Train   *modelspec.TrainReport      // nil: no training curves
	Eval    *evaluate.Result            // the held-out split's; nil: none
	Corpora map[string]*evaluate.Result // by evaluation corpus name
}

// TidySet is what WriteTidyTables writes: a profile's runs (the report)
// or a sweep's (the study, Sweep set: a point column leads each table).
type TidySet struct {
	Commit  string
	Corpora []string // evaluation corpora, in the order written
	Sweep   bool
	Runs    []TidyRun
}

// tidySet is the report's runs as a TidySet.
func tidySet(cfg Config, vs []*variantData) TidySet {
	set := TidySet{Commit: cfg.Commit, Corpora: cfg.EvalCorpora}
	for _, v := range vs {
		set.Runs = append(set.Runs, TidyRun{Variant: v.variant, Seed: v.seed, Train: v.train, Eval: v.eval, Corpora: v.corpora})
	}
	return set
}

// tidyRows lists every run's evaluations: the training corpus's held-out
// split, then each evaluation corpus; in each, the primary protocol then
// the others; per length its aggregate metrics, then its per-window losses.
func tidyRows(set TidySet) []tidyRow {
	var out []tidyRow
	for _, v := range set.Runs {
		type corpusEval struct {
			corpus string
			res    *evaluate.Result
		}
		evals := []corpusEval{{HeldOutCorpus, v.Eval}}
		for _, c := range set.Corpora {
			evals = append(evals, corpusEval{c, v.Corpora[c]})
		}
		for _, e := range evals {
			if e.res == nil {
				continue
			}
			base := tidyRow{Point: v.Point, Variant: v.Variant, Seed: v.Seed, Corpus: e.corpus, T: e.res.Protocol.Context, Window: -1,
				Lo: math.NaN(), Hi: math.NaN(), Commit: set.Commit}
			base.Protocol = evaluate.ProtocolRandom
			out = appendLengths(out, base, e.res.Lengths, true)
			out = appendPositionCurve(out, base, e.res)
			out = appendMechanism(out, base, e.res)
			for _, p := range e.res.Protocols {
				base.Protocol = p.Protocol
				out = appendLengths(out, base, p.Lengths, false)
			}
		}
	}
	return out
}

func appendLengths(out []tidyRow, base tidyRow, lengths []evaluate.LengthResult, primary bool) []tidyRow {
	for _, l := range lengths {
		r := base
		r.L = l.L
		add := func(metric string, value float64) {
			x := r
			x.Metric, x.Value = metric, value
			out = append(out, x)
		}
		addIv := func(metric string, iv stats.Interval, covers string) {
			x := r
			x.Metric, x.Value, x.Lo, x.Hi, x.Interval = metric, iv.Value, iv.Lo, iv.Hi, covers
			out = append(out, x)
		}
		addIv("ppl", l.PPL, ivWindows)
		addIv("ratio", l.Ratio, ivRatio)
		if l.PrefixRatio != nil {
			addIv("prefix_ratio", *l.PrefixRatio, ivPaired)
		}
		if primary {
			add("attention_entropy", l.Entropy)
			for _, f := range l.FarMass {
				if f.Heads > 0 {
					addIv(fmt.Sprintf("far_mass@%d", f.Distance), stats.Interval{Value: f.Mean, Lo: f.HeadMin, Hi: f.HeadMax}, ivHeads)
				}
			}
			out = appendContextGain(out, r, l)
		}
		for w, x := range l.WindowLoss {
			r.Window = w
			add("window_loss", x)
		}
		for w, x := range l.PrefixLoss {
			r.Window = w
			add("prefix_loss", x)
		}
	}
	return out
}

// table is a typed, column-major table written as CSV and as Parquet.
// Nulls: NaN in a nullable float column, a negative value in a nullable
// int column; both are empty in the CSV and null in Parquet.
type table struct {
	about string // the Parquet schema's routebench.table metadata
	cols  []column
}

type column struct {
	name     string
	typ      arrow.DataType // String, Uint64, Int64 or Float64
	nullable bool
	s        []string
	u        []uint64
	i        []int64
	f        []float64
}

func (c *column) null(k int) bool {
	switch {
	case !c.nullable:
		return false
	case c.typ == arrow.PrimitiveTypes.Int64:
		return c.i[k] < 0
	case c.typ == arrow.PrimitiveTypes.Float64:
		return math.IsNaN(c.f[k])
	}
	return false
}

func (c *column) text(k int) string {
	if c.null(k) {
		return ""
	}
	switch c.typ {
	case arrow.PrimitiveTypes.Uint64:
		return strconv.FormatUint(c.u[k], 10)
	case arrow.PrimitiveTypes.Int64:
		return strconv.FormatInt(c.i[k], 10)
	case arrow.PrimitiveTypes.Float64:
		return strconv.FormatFloat(c.f[k], 'g', -1, 64)
	}
	return c.s[k]
}

func (t *table) rows() int {
	c := t.cols[0]
	return max(len(c.s), len(c.u), len(c.i), len(c.f))
}

// tidyTable lays out tidyRows in tidyColumns' order, after a point
// column for a sweep.
func tidyTable(rs []tidyRow, sweep bool) *table {
	str, u64, i64, f64 := arrow.BinaryTypes.String, arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	t := &table{about: "tidy results: one measured value per row (docs/interop.md)"}
	types := []arrow.DataType{str, u64, str, str, i64, i64, i64, str, f64, f64, f64, str, str}
	for k, name := range tidyColumns {
		t.cols = append(t.cols, column{name: name, typ: types[k], nullable: name == "window" || name == "lo" || name == "hi"})
	}
	c := t.cols
	for _, r := range rs {
		c[0].s = append(c[0].s, r.Variant)
		c[1].u = append(c[1].u, r.Seed)
		c[2].s = append(c[2].s, r.Corpus)
		c[3].s = append(c[3].s, r.Protocol)
		c[4].i = append(c[4].i, int64(r.T))
		c[5].i = append(c[5].i, int64(r.L))
		c[6].i = append(c[6].i, int64(r.Window))
		c[7].s = append(c[7].s, r.Metric)
		c[8].f = append(c[8].f, r.Value)
		c[9].f = append(c[9].f, r.Lo)
		c[10].f = append(c[10].f, r.Hi)
		c[11].s = append(c[11].s, r.Interval)
		c[12].s = append(c[12].s, r.Commit)
	}
	if sweep {
		point := column{name: "point", typ: str}
		for _, r := range rs {
			point.s = append(point.s, r.Point)
		}
		t.cols = append([]column{point}, t.cols...)
	}
	return t
}

func writeCSVTable(path string, t *table) error {
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
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func writeParquetTable(path string, t *table) error {
	fields := make([]arrow.Field, len(t.cols))
	for k, c := range t.cols {
		fields[k] = arrow.Field{Name: c.name, Type: c.typ, Nullable: c.nullable}
	}
	md := arrow.NewMetadata([]string{"routebench.table"}, []string{t.about})
	schema := arrow.NewSchema(fields, &md)
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range t.rows() {
		for k := range t.cols {
			c := &t.cols[k]
			if c.null(i) {
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
	// A fixed created_by: the bytes depend on the rows only, not on the
	// library's version string.
	props := parquet.NewWriterProperties(parquet.WithCreatedBy("routebench report"))
	fw, err := pqarrow.NewFileWriter(schema, &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
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
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// The files WriteTidyTables writes into its directory.
const (
	tidyBase   = "tidy"
	curvesBase = "train_curves"
)

// WriteTidyTables writes set's tidy results (tidy.csv, tidy.parquet) and
// training curves (train_curves.csv, .parquet) into dir: the report into
// results/, a sweep's study beside its plots.
func WriteTidyTables(dir string, set TidySet) error {
	tidy, curves := tidyTable(tidyRows(set), set.Sweep), curvesTable(set)
	for _, f := range []struct {
		name  string
		write func(string, *table) error
		t     *table
	}{
		{tidyBase + ".csv", writeCSVTable, tidy}, {tidyBase + ".parquet", writeParquetTable, tidy},
		{curvesBase + ".csv", writeCSVTable, curves}, {curvesBase + ".parquet", writeParquetTable, curves},
	} {
		if err := f.write(filepath.Join(dir, f.name), f.t); err != nil {
			return err
		}
	}
	return nil
}

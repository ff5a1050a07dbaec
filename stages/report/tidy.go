package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"routebench/stages/evaluate"
	"routebench/stats"
)

// The tidy results: every number the evaluate stages measured, one per
// row (long format), for a dataframe rather than for reading; results.csv
// keeps its wide per-length table. docs/interop.md documents the columns.
const (
	TidyCSVFile     = "results/tidy.csv"
	TidyParquetFile = "results/tidy.parquet"
)

// HeldOutCorpus is the corpus column's value for the training corpus's
// own held-out split (an evaluation corpus is named as --eval-corpus named it).
const HeldOutCorpus = "heldout"

// tidyRow is one measured value. Lo, Hi are NaN and Window is -1 where
// the row has none (empty in the CSV, null in Parquet).
type tidyRow struct {
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
// percentile bootstrap at stats.Confidence with stats.BootstrapResamples
// draws, the resampled unit named; or a range that is no confidence
// interval. A code is repeated on every row, so it is kept short.
var (
	ivWindows = fmt.Sprintf("bootstrap%g:windows", 100*stats.Confidence)             // this model's windows at L
	ivRatio   = fmt.Sprintf("bootstrap%g:windows-L-and-T", 100*stats.Confidence)     // the windows at L and at T, independently
	ivPaired  = fmt.Sprintf("bootstrap%g:window-prefix-pairs", 100*stats.Confidence) // windows as (whole window, its first T) pairs
	ivHeads   = "range:heads"                                                        // smallest and largest per-(layer, head) mean
)

// tidyRows lists every run's evaluations: the training corpus's held-out
// split, then each evaluation corpus; in each, the primary protocol then
// the others; per length its aggregate metrics, then its per-window losses.
func tidyRows(cfg Config, vs []*variantData) []tidyRow {
	var out []tidyRow
	for _, v := range vs {
		evals := []struct {
			corpus string
			res    *evaluate.Result
		}{{HeldOutCorpus, v.eval}}
		for _, c := range cfg.EvalCorpora {
			evals = append(evals, struct {
				corpus string
				res    *evaluate.Result
			}{c, v.corpora[c]})
		}
		for _, e := range evals {
			if e.res == nil {
				continue
			}
			base := tidyRow{Variant: v.variant, Seed: v.seed, Corpus: e.corpus, T: e.res.Protocol.Context, Window: -1,
				Lo: math.NaN(), Hi: math.NaN(), Commit: cfg.Commit}
			base.Protocol = evaluate.ProtocolRandom
			out = appendLengths(out, base, e.res.Lengths, true)
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

func writeTidyCSV(path string, rs []tidyRow) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(tidyColumns)
	opt := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	for _, r := range rs {
		win := ""
		if r.Window >= 0 {
			win = strconv.Itoa(r.Window)
		}
		w.Write([]string{r.Variant, strconv.FormatUint(r.Seed, 10), r.Corpus, r.Protocol, strconv.Itoa(r.T), strconv.Itoa(r.L), win,
			r.Metric, strconv.FormatFloat(r.Value, 'g', -1, 64), opt(r.Lo), opt(r.Hi), r.Interval, r.Commit})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("report: encoding %s: %w", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// tidySchema is the Parquet file's schema: the CSV's columns, typed, with
// window, lo and hi nullable.
func tidySchema() *arrow.Schema {
	str, i64, f64 := arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	types := []arrow.DataType{str, arrow.PrimitiveTypes.Uint64, str, str, i64, i64, i64, str, f64, f64, f64, str, str}
	fields := make([]arrow.Field, len(tidyColumns))
	for i, c := range tidyColumns {
		fields[i] = arrow.Field{Name: c, Type: types[i], Nullable: c == "window" || c == "lo" || c == "hi"}
	}
	md := arrow.NewMetadata([]string{"routebench.table"}, []string{"tidy results: one measured value per row (docs/interop.md)"})
	return arrow.NewSchema(fields, &md)
}

func writeTidyParquet(path string, rs []tidyRow) error {
	schema := tidySchema()
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	str := func(i int, s string) { b.Field(i).(*array.StringBuilder).Append(s) }
	i64 := func(i int, x int) { b.Field(i).(*array.Int64Builder).Append(int64(x)) }
	optF := func(i int, x float64) {
		if math.IsNaN(x) {
			b.Field(i).AppendNull()
			return
		}
		b.Field(i).(*array.Float64Builder).Append(x)
	}
	for _, r := range rs {
		str(0, r.Variant)
		b.Field(1).(*array.Uint64Builder).Append(r.Seed)
		str(2, r.Corpus)
		str(3, r.Protocol)
		i64(4, r.T)
		i64(5, r.L)
		if r.Window >= 0 {
			i64(6, r.Window)
		} else {
			b.Field(6).AppendNull()
		}
		str(7, r.Metric)
		b.Field(8).(*array.Float64Builder).Append(r.Value)
		optF(9, r.Lo)
		optF(10, r.Hi)
		str(11, r.Interval)
		str(12, r.Commit)
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

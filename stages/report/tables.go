package report

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Machine-readable results beside RESULTS.md, for pandas/polars users.
const (
	CSVFile   = "results/results.csv"
	ArrowFile = "results/results.arrow"
)

// row is one (variant, seed, length) of the results table.
type row struct {
	Variant                    string
	Seed                       uint64 // the training seed (0 if the plan has no train stage)
	L, Multiplier              int
	PPL, PPLLo, PPLHi          float64
	Ratio, RatioLo, RatioHi    float64
	FarQuarterT, FarT, Entropy float64
	// The paired prefix ratio (docs/statistics.md): NaN in a format-1
	// evaluation, which has none.
	Prefix, PrefixLo, PrefixHi float64
}

var columns = []string{"variant", "seed", "length", "multiplier", "ppl", "ppl_lo", "ppl_hi", "ratio", "ratio_lo", "ratio_hi", "far_mass_T4", "far_mass_T", "entropy",
	"prefix_ratio", "prefix_ratio_lo", "prefix_ratio_hi"}

func rows(vs []*variantData) []row {
	var out []row
	for _, v := range vs {
		if v.eval == nil {
			continue
		}
		T := v.eval.Protocol.Context
		for _, l := range v.eval.Lengths {
			r := row{Variant: v.variant, Seed: v.seed, L: l.L, Multiplier: l.Multiplier,
				PPL: l.PPL.Value, PPLLo: l.PPL.Lo, PPLHi: l.PPL.Hi,
				Ratio: l.Ratio.Value, RatioLo: l.Ratio.Lo, RatioHi: l.Ratio.Hi, Entropy: l.Entropy,
				Prefix: math.NaN(), PrefixLo: math.NaN(), PrefixHi: math.NaN()}
			if p := l.PrefixRatio; p != nil {
				r.Prefix, r.PrefixLo, r.PrefixHi = p.Value, p.Lo, p.Hi
			}
			if f, ok := farAt(l.FarMass, T/4); ok {
				r.FarQuarterT = f.Mean
			}
			if f, ok := farAt(l.FarMass, T); ok {
				r.FarT = f.Mean
			}
			out = append(out, r)
		}
	}
	return out
}

func (r row) floats() []float64 {
	return []float64{r.PPL, r.PPLLo, r.PPLHi, r.Ratio, r.RatioLo, r.RatioHi, r.FarQuarterT, r.FarT, r.Entropy, r.Prefix, r.PrefixLo, r.PrefixHi}
}

func writeCSV(path string, rs []row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(columns)
	for _, r := range rs {
		rec := []string{r.Variant, strconv.FormatUint(r.Seed, 10), strconv.Itoa(r.L), strconv.Itoa(r.Multiplier)}
		for _, x := range r.floats() {
			rec = append(rec, strconv.FormatFloat(x, 'g', 8, 64))
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	return f.Close()
}

func writeArrow(path string, rs []row) error {
	fields := []arrow.Field{
		{Name: columns[0], Type: arrow.BinaryTypes.String},
		{Name: columns[1], Type: arrow.PrimitiveTypes.Uint64},
		{Name: columns[2], Type: arrow.PrimitiveTypes.Int64},
		{Name: columns[3], Type: arrow.PrimitiveTypes.Int64},
	}
	for _, c := range columns[4:] {
		fields = append(fields, arrow.Field{Name: c, Type: arrow.PrimitiveTypes.Float64})
	}
	md := arrow.NewMetadata([]string{"routebench.table"}, []string{"perplexity by variant and evaluation length"})
	schema := arrow.NewSchema(fields, &md)
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, r := range rs {
		b.Field(0).(*array.StringBuilder).Append(r.Variant)
		b.Field(1).(*array.Uint64Builder).Append(r.Seed)
		b.Field(2).(*array.Int64Builder).Append(int64(r.L))
		b.Field(3).(*array.Int64Builder).Append(int64(r.Multiplier))
		for k, x := range r.floats() {
			b.Field(4 + k).(*array.Float64Builder).Append(x)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		f.Close()
		return err
	}
	if err := w.Write(rec); err != nil {
		f.Close()
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

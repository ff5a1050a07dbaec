package report

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// tidyColumn is one column of tidy.parquet: its name, type, whether it
// may be null, and how a row fills it (ok false: null). The list is the
// schema's one home; docs/interop.md's table states it for readers
// (TestTidySchemaDocumented).
type tidyColumn struct {
	name     string
	typ      arrow.DataType
	nullable bool
	fill     func(c *column, r tidyRow)
}

func intCol(name string, get func(r tidyRow) int) tidyColumn {
	return tidyColumn{name, tInt64, true, func(c *column, r tidyRow) { v := get(r); c.i64(int64(v), v != none) }}
}

func strCol(name string, get func(r tidyRow) string) tidyColumn {
	return tidyColumn{name, tString, false, func(c *column, r tidyRow) { c.str(get(r), true) }}
}

func boundCol(name string, get func(r tidyRow) float64) tidyColumn {
	return tidyColumn{name, tFloat64, true, func(c *column, r tidyRow) { v := get(r); c.f64(v, !math.IsNaN(v)) }}
}

var tidyColumns = []tidyColumn{
	strCol("level", func(r tidyRow) string { return r.Level }),
	strCol("variant", func(r tidyRow) string { return r.Variant }),
	{"seed", tUint64, true, func(c *column, r tidyRow) { c.u64(r.Seed, r.Level != LevelAll) }},
	strCol("corpus", func(r tidyRow) string { return r.Corpus }),
	strCol("protocol", func(r tidyRow) string { return r.Protocol }),
	{"T", tInt64, false, func(c *column, r tidyRow) { c.i64(int64(r.T), true) }},
	intCol("L", func(r tidyRow) int { return r.L }),
	strCol("metric", func(r tidyRow) string { return r.Metric }),
	intCol("distance", func(r tidyRow) int { return r.Distance }),
	intCol("pos_start", func(r tidyRow) int { return r.PosStart }),
	intCol("pos_end", func(r tidyRow) int { return r.PosEnd }),
	intCol("gap", func(r tidyRow) int { return r.Gap }),
	intCol("window", func(r tidyRow) int { return r.Window }),
	intCol("n_seeds", func(r tidyRow) int { return r.Seeds }),
	{"value", tFloat64, false, func(c *column, r tidyRow) { c.f64(r.Value, true) }},
	boundCol("lo", func(r tidyRow) float64 { return r.Lo }),
	boundCol("hi", func(r tidyRow) float64 { return r.Hi }),
	{"interval", tString, true, func(c *column, r tidyRow) { c.str(r.Interval, r.Interval != "") }},
}

// pointColumn leads a sweep's tables: the point's label.
func pointColumn() column { return column{name: "point", typ: tString} }

// tidyTable lays out tidyRows in tidyColumns' order, after a point
// column for a sweep.
func tidyTable(rs []tidyRow, sweep bool) *table {
	t := &table{about: "tidy results: one measured value per row (docs/interop.md)"}
	for _, tc := range tidyColumns {
		t.cols = append(t.cols, column{name: tc.name, typ: tc.typ, nullable: tc.nullable})
	}
	for _, r := range rs {
		for k, tc := range tidyColumns {
			tc.fill(&t.cols[k], r)
		}
	}
	if sweep {
		point := pointColumn()
		for _, r := range rs {
			point.str(r.Point, true)
		}
		t.cols = append([]column{point}, t.cols...)
	}
	return t
}

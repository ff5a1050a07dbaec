package report

import "github.com/apache/arrow-go/v18/arrow"

// The training curves as data, beside the tidy results: every run's
// train.json curves in long format (docs/interop.md).
const (
	CurvesCSVFile     = "results/" + curvesBase + ".csv"
	CurvesParquetFile = "results/" + curvesBase + ".parquet"
)

var curveColumns = []string{"variant", "seed", "T", "step", "metric", "value", "commit"}

// curvesTable lists each run's train_loss and grad_norm at every step (the
// step's training batch; the norm before clipping) and its heldout_loss
// at every evaluation, steps counted from 1 (the state after that many
// updates, as train.json counts them); a point column leads for a sweep.
func curvesTable(set TidySet) *table {
	str, u64, i64, f64 := arrow.BinaryTypes.String, arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	types := []arrow.DataType{str, u64, i64, i64, str, f64, str}
	t := &table{about: "training curves: one value per run, step and metric (docs/interop.md)"}
	for k, name := range curveColumns {
		t.cols = append(t.cols, column{name: name, typ: types[k]})
	}
	c := t.cols
	point := column{name: "point", typ: str}
	add := func(v TidyRun, step int, metric string, value float64) {
		point.s = append(point.s, v.Point)
		c[0].s = append(c[0].s, v.Variant)
		c[1].u = append(c[1].u, v.Seed)
		c[2].i = append(c[2].i, int64(v.Train.Config.Context))
		c[3].i = append(c[3].i, int64(step))
		c[4].s = append(c[4].s, metric)
		c[5].f = append(c[5].f, value)
		c[6].s = append(c[6].s, set.Commit)
	}
	for _, v := range set.Runs {
		if v.Train == nil {
			continue
		}
		for i, x := range v.Train.TrainLoss {
			add(v, i+1, "train_loss", x)
		}
		for i, x := range v.Train.GradNorm {
			add(v, i+1, "grad_norm", x)
		}
		for _, e := range v.Train.Eval {
			add(v, e.Step, "heldout_loss", e.Loss)
		}
	}
	if set.Sweep {
		t.cols = append([]column{point}, t.cols...)
	}
	return t
}

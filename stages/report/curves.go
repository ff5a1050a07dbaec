package report

import "github.com/apache/arrow-go/v18/arrow"

// The training curves as data, beside the tidy results: every run's
// train.json curves in long format (docs/interop.md).
const (
	CurvesCSVFile     = "results/train_curves.csv"
	CurvesParquetFile = "results/train_curves.parquet"
)

var curveColumns = []string{"variant", "seed", "T", "step", "metric", "value", "commit"}

// curvesTable lists each run's train_loss and grad_norm at every step (the
// step's training batch; the norm before clipping) and its heldout_loss
// at every evaluation, steps counted from 1 (the state after that many
// updates, as train.json counts them).
func curvesTable(cfg Config, vs []*variantData) *table {
	str, u64, i64, f64 := arrow.BinaryTypes.String, arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	types := []arrow.DataType{str, u64, i64, i64, str, f64, str}
	t := &table{about: "training curves: one value per run, step and metric (docs/interop.md)"}
	for k, name := range curveColumns {
		t.cols = append(t.cols, column{name: name, typ: types[k]})
	}
	c := t.cols
	add := func(v *variantData, step int, metric string, value float64) {
		c[0].s = append(c[0].s, v.variant)
		c[1].u = append(c[1].u, v.seed)
		c[2].i = append(c[2].i, int64(v.train.Config.Context))
		c[3].i = append(c[3].i, int64(step))
		c[4].s = append(c[4].s, metric)
		c[5].f = append(c[5].f, value)
		c[6].s = append(c[6].s, cfg.Commit)
	}
	for _, v := range vs {
		if v.train == nil {
			continue
		}
		for i, x := range v.train.TrainLoss {
			add(v, i+1, "train_loss", x)
		}
		for i, x := range v.train.GradNorm {
			add(v, i+1, "grad_norm", x)
		}
		for _, e := range v.train.Eval {
			add(v, e.Step, "heldout_loss", e.Loss)
		}
	}
	return t
}

package report

// The training curves as data, beside the tidy results: every run's
// train.json curves in long format (docs/interop.md).
const CurvesParquetFile = "results/" + curvesBase + ".parquet"

// curvesTable lists each run's train_loss and grad_norm at every step (the
// step's training batch; the norm before clipping) and its heldout_loss
// at every evaluation, steps counted from 1 (the state after that many
// updates, as train.json counts them); a point column leads for a sweep.
func curvesTable(set TidySet) *table {
	t := &table{about: "training curves: one value per run, step and metric (docs/interop.md)"}
	for _, c := range []column{{name: "variant", typ: tString}, {name: "seed", typ: tUint64}, {name: "T", typ: tInt64},
		{name: "step", typ: tInt64}, {name: "metric", typ: tString}, {name: "value", typ: tFloat64}} {
		t.cols = append(t.cols, c)
	}
	c := t.cols
	point := pointColumn()
	add := func(v TidyRun, step int, metric string, value float64) {
		point.str(v.Point, true)
		c[0].str(v.Variant, true)
		c[1].u64(v.Seed, true)
		c[2].i64(int64(v.Train.Config.Context), true)
		c[3].i64(int64(step), true)
		c[4].str(metric, true)
		c[5].f64(value, true)
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

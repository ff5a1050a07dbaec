package report

import (
	"fmt"
	"math"
	"path/filepath"

	"routebench/modelspec"
	"routebench/stages/evaluate"
	"routebench/stats"
)

// The tidy results: every number the evaluate stages measured, one per
// row (long format), for a dataframe rather than for reading; results.csv
// keeps its wide per-length table. docs/interop.md documents the columns
// (TestTidySchemaDocumented holds the two together). The committed form
// is Parquet; `routebench tables` writes the CSV on demand (TablesToCSV).
// No row carries the commit: it is one line of TablesCommit, so that a rerun
// that moves no figure rewrites no byte of the tables.
const (
	TidyParquetFile = "results/" + tidyBase + ".parquet"
	TablesCommit    = "results/" + commitBase
)

// HeldOutCorpus is the corpus column's value for the training corpus's
// own held-out split (an evaluation corpus is named as --eval-corpus named it).
const HeldOutCorpus = "heldout"

// A row's level: what its value is an observation of.
const (
	LevelWindow = "window" // one window (the copy probe: one probe) of one trained model
	LevelSeed   = "seed"   // one trained model: its figure over its windows
	LevelAll    = "all"    // the variant: its figure over its training seeds (acrossSeeds)
)

// none marks an integer field a row does not have (null in the tables).
const none = -1

// tidyRow is one measured value. Integer fields are none, Lo and Hi NaN
// and Interval empty where the row has no such thing (a null in the
// tables); Seed is meaningless at LevelAll.
type tidyRow struct {
	Point    string // a sweep point's label (TidySet.Sweep)
	Level    string
	Variant  string
	Seed     uint64
	Corpus   string
	Protocol string
	T, L     int // L: the evaluation length; none for the copy probe
	Metric   string
	// The metric's parameters: far_mass's distance D (and the mechanism
	// probe's far threshold), position_loss's bin [PosStart, PosEnd), the
	// copy probe's gap.
	Distance, PosStart, PosEnd, Gap int
	Window                          int // LevelWindow: the window's (probe's) index
	Seeds                           int // LevelAll: how many seeds it combines
	Value                           float64
	Lo, Hi                          float64
	Interval                        string // what [Lo, Hi] covers
}

// What the intervals cover, as short codes (docs/interop.md): stats'
// Student-t interval at stats.Confidence over the unit named (Welch's for
// the windows at L and at T); or a range that is no confidence interval.
var (
	ivWindows  = fmt.Sprintf("t%g:windows", 100*stats.Confidence)             // this model's windows at L
	ivRatio    = fmt.Sprintf("welch%g:windows-L-and-T", 100*stats.Confidence) // the windows at L and at T, independently
	ivPaired   = fmt.Sprintf("t%g:window-prefix-pairs", 100*stats.Confidence) // windows as (whole window, its first T) pairs
	ivHeads    = "range:heads"                                                // smallest and largest per-(layer, head) mean
	ivSeeds    = fmt.Sprintf("t%g:seeds", 100*stats.Confidence)               // the seeds' values (stats.OverSeeds)
	ivSeedsLog = fmt.Sprintf("logt%g:seeds", 100*stats.Confidence)            // the seeds' logs, mapped back (stats.GeoOverSeeds)
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
	Commit  string   // the source revision: TablesCommit's one line
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
// the others; per length its seed-level figures, each followed by its
// window rows. The LevelAll rows (acrossSeeds) come last.
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
			base := tidyRow{Point: v.Point, Level: LevelSeed, Variant: v.Variant, Seed: v.Seed, Corpus: e.corpus, T: e.res.Protocol.Context,
				L: none, Distance: none, PosStart: none, PosEnd: none, Gap: none, Window: none, Seeds: none, Lo: math.NaN(), Hi: math.NaN()}
			base.Protocol = evaluate.ProtocolRandom
			out = appendLengths(out, base, e.res.Lengths, true)
			out = appendPositionCurve(out, base, e.res)
			out = appendMechanismRows(out, base, e.res)
			for _, p := range e.res.Protocols {
				base.Protocol = p.Protocol
				out = appendLengths(out, base, p.Lengths, false)
			}
		}
	}
	return append(out, acrossSeeds(out)...)
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
		addIv := func(x tidyRow, metric string, iv stats.Interval, covers string) {
			x.Metric, x.Value, x.Lo, x.Hi, x.Interval = metric, iv.Value, iv.Lo, iv.Hi, covers
			out = append(out, x)
		}
		addIv(r, "ppl", l.PPL, ivWindows)
		addIv(r, "ratio", l.Ratio, ivRatio)
		if l.PrefixRatio != nil {
			addIv(r, "prefix_ratio", *l.PrefixRatio, ivPaired)
		}
		if primary {
			add("attention_entropy", l.Entropy)
			for _, f := range l.FarMass {
				if f.Heads > 0 {
					x := r
					x.Distance = f.Distance
					addIv(x, "far_mass", stats.Interval{Value: f.Mean, Lo: f.HeadMin, Hi: f.HeadMax}, ivHeads)
				}
			}
			if g := l.ContextGain; g != nil {
				out = appendWindowed(out, r, "context_gain", g.Gain)
				out = appendWindowed(out, r, "context_gain_share", g.Share)
			}
		}
		w := r
		w.Level = LevelWindow
		for k, x := range l.WindowLoss {
			w.Window, w.Metric, w.Value = k, "window_loss", x
			out = append(out, w)
		}
		for k, x := range l.PrefixLoss {
			w.Window, w.Metric, w.Value = k, "prefix_loss", x
			out = append(out, w)
		}
	}
	return out
}

// appendPositionCurve adds a run's position curve: per bin the mean over
// windows with its t interval, then each window's.
func appendPositionCurve(out []tidyRow, base tidyRow, res *evaluate.Result) []tidyRow {
	pc := res.PositionCurve
	if pc == nil {
		return out
	}
	base.L = pc.L
	for b, bin := range pc.Bins {
		col := make([]float64, len(pc.WindowLoss))
		for w, row := range pc.WindowLoss {
			col[w] = row[b]
		}
		r := base
		r.PosStart, r.PosEnd = bin.Start, bin.End
		out = appendWindowed(out, r, "position_loss", col)
	}
	return out
}

// appendMechanismRows adds the mechanism figures: per length the
// per-window far mass, far coherence (plain and weighted by far mass)
// and bound beyond the probe's far distance (each with its mean over
// windows and t interval), the route
// window n* (median over layers, heads and pairs; -1 when not found by
// the longest route), and per gap the copy probe's raw and controlled
// gains, one window row per probe (the copy probe has no length L).
func appendMechanismRows(out []tidyRow, base tidyRow, r *evaluate.Result) []tidyRow {
	if m := r.Mechanism; m != nil {
		for _, ml := range m.Lengths {
			if len(ml.FarMass) == 0 {
				continue // T: no query sees a source beyond T
			}
			b := base
			b.L, b.Distance = ml.L, m.Far
			out = appendWindowed(out, b, "far_mass_probe", ml.FarMass)
			out = appendWindowed(out, b, "far_coherence", ml.FarCoherence)
			if len(ml.FarCoherenceWeighted) > 0 {
				out = appendWindowed(out, b, "far_coherence_weighted", ml.FarCoherenceWeighted)
			}
			out = appendWindowed(out, b, "far_mass_bound", ml.Bound)
		}
	}
	if mx := r.Mixing; mx != nil {
		for _, l := range mx.Lengths {
			b := base
			b.L, b.Metric, b.Value = l.L, "route_window_median", l.Window.Median
			p := b
			p.Metric, p.Value = "route_window_predicted_median", l.PredictedWindow.Median
			out = append(out, b, p)
		}
	}
	if c := r.Copy; c != nil {
		for _, g := range c.Gaps {
			b := base
			b.Gap = g.D
			out = appendWindowed(out, b, "copy_gain", g.Gain)
			if ctl := g.ContextMatchedGains(r.Format); len(ctl) > 0 {
				out = appendWindowed(out, b, "copy_gain_controlled", ctl)
			}
		}
	}
	return out
}

// appendWindowed adds a seed-level row (the mean over windows with its t
// interval, stats.WindowT) and one window row per window.
func appendWindowed(out []tidyRow, base tidyRow, metric string, perWindow []float64) []tidyRow {
	e := stats.WindowT(perWindow)
	r := base
	r.Level, r.Metric, r.Value, r.Lo, r.Hi = LevelSeed, metric, e.Mean, e.Lo, e.Hi
	if !math.IsNaN(e.Lo) {
		r.Interval = ivWindows
	}
	out = append(out, r)
	for w, x := range perWindow {
		r := base
		r.Level, r.Metric, r.Value, r.Window = LevelWindow, metric, x, w
		out = append(out, r)
	}
	return out
}

// The files WriteTidyTables writes into its directory.
const (
	tidyBase   = "tidy"
	curvesBase = "train_curves"
	commitBase = "tables-commit.txt"
)

// WriteTidyTables writes set's tidy results (tidy.parquet), training
// curves (train_curves.parquet) and the commit line (tables-commit.txt)
// into dir: the report into results/, a sweep's study beside its plots.
func WriteTidyTables(dir string, set TidySet) error {
	for _, f := range []struct {
		name string
		t    *table
	}{{tidyBase + ".parquet", tidyTable(tidyRows(set), set.Sweep)}, {curvesBase + ".parquet", curvesTable(set)}} {
		if err := writeParquetTable(filepath.Join(dir, f.name), f.t); err != nil {
			return err
		}
	}
	return writeTableFile(filepath.Join(dir, commitBase), []byte(set.Commit+"\n"))
}

package study

import (
	"fmt"
	"path"

	"routebench/stages/evaluate"
	"routebench/stages/report"
)

// midMultiplier is the study's first length, the paper's 8K at T = 512 (the
// length a claim "at 16T" is read at, report.LengthAtMost); the second is
// each point's longest.
const midMultiplier = 16

// variantPoint is one variant at one point, over its seeds.
type variantPoint struct {
	variant  string
	runs     []runData
	combined *evaluate.Result // report.CombineSeeds
	mid      evaluate.LengthResult
	long     evaluate.LengthResult
}

type pointSummary struct {
	Point
	variants []variantPoint
	claims   []report.Claim // report.ClaimsOverSeeds at this point
	wallSecs float64
}

// summarize combines each point's runs over seeds, variant by variant, and
// judges the claims there.
func summarize(cfg Config, data [][]runData) ([]pointSummary, error) {
	var out []pointSummary
	for i, p := range cfg.Points {
		ps := pointSummary{Point: p}
		index := map[string]int{}
		for _, d := range data[i] {
			k, ok := index[d.Variant]
			if !ok {
				k = len(ps.variants)
				index[d.Variant] = k
				ps.variants = append(ps.variants, variantPoint{variant: d.Variant})
			}
			ps.variants[k].runs = append(ps.variants[k].runs, d)
			ps.wallSecs += d.wallSecs
		}
		perSeed := make([]map[string]*evaluate.Result, len(cfg.Seeds))
		for s := range perSeed {
			perSeed[s] = map[string]*evaluate.Result{}
		}
		for k := range ps.variants {
			v := &ps.variants[k]
			if len(v.runs) != len(cfg.Seeds) {
				return nil, fmt.Errorf("study %s: point %s has %d runs of %s for %d seeds", cfg.Name, p.Label, len(v.runs), v.variant, len(cfg.Seeds))
			}
			var evs []*evaluate.Result
			for s, r := range v.runs {
				evs = append(evs, r.eval)
				perSeed[s][v.variant] = r.eval
			}
			c, err := report.CombineSeeds(evs)
			if err != nil {
				return nil, fmt.Errorf("study %s: point %s: %w", cfg.Name, p.Label, err)
			}
			v.combined = c
			v.mid, _ = report.LengthAtMost(c, midMultiplier)
			v.long = report.Longest(c)
		}
		claims, err := report.ClaimsOverSeeds(perSeed, cfg.Seeds)
		if err != nil {
			return nil, fmt.Errorf("study %s: point %s: %w", cfg.Name, p.Label, err)
		}
		ps.claims = claims
		out = append(out, ps)
	}
	return out, nil
}

// studyPlot is one plot of the study: the ratio at one length against one axis.
type studyPlot struct {
	axis  int
	at    string // "16T" or "longest"
	title string
	file  string // relative to the output directory
}

// writePlots draws, for each axis, the ratio at 16T and at the longest
// length against the axis's values, one line per variant and combination
// of the other axes' values, with the intervals of the seed means.
func writePlots(outDir string, cfg Config, pts []pointSummary) ([]studyPlot, error) {
	var plots []studyPlot
	sameLength := true // the longest length is <= 16T everywhere: one plot per axis
	for _, p := range pts {
		for _, v := range p.variants {
			sameLength = sameLength && v.mid.Multiplier == v.long.Multiplier
		}
	}
	for a, ax := range cfg.Axes {
		for _, at := range []string{"16T", "longest"} {
			if at == "16T" && sameLength {
				continue
			}
			pick := func(v variantPoint) evaluate.LengthResult {
				if at == "16T" {
					return v.mid
				}
				return v.long
			}
			series, mults := axisSeries(cfg, pts, a, pick)
			sp := studyPlot{axis: a, at: at, file: path.Join(plotDir(cfg.Name), fmt.Sprintf("ratio-%s-%s.png", at, ax.Key)),
				title: fmt.Sprintf("PPL ratio at %s against %s", lengthLabel(mults), ax.Key)}
			ylabel := "PPL(L) / PPL(T)"
			if err := report.IntervalPlot(path.Join(outDir, sp.file), sp.title, ax.Key, ylabel, report.LabelTicks(ax.Values), series); err != nil {
				return nil, fmt.Errorf("study %s: %s: %w", cfg.Name, sp.file, err)
			}
			plots = append(plots, sp)
		}
	}
	return plots, nil
}

// axisSeries is one series per variant and combination of the other axes'
// values, along axis a, and the multipliers the points were read at.
func axisSeries(cfg Config, pts []pointSummary, a int, pick func(variantPoint) evaluate.LengthResult) ([]report.Series, map[int]bool) {
	var series []report.Series
	index := map[string]int{}
	mults := map[int]bool{}
	for _, p := range pts {
		rest := ""
		for b, ax := range cfg.Axes {
			if b != a {
				rest += fmt.Sprintf(", %s=%s", ax.Key, ax.Values[p.Values[b]])
			}
		}
		for _, v := range p.variants {
			name := v.variant + rest
			k, ok := index[name]
			if !ok {
				k = len(series)
				index[name] = k
				series = append(series, report.Series{Name: name})
			}
			l := pick(v)
			mults[l.Multiplier] = true
			s := &series[k]
			s.X, s.Y = append(s.X, float64(p.Values[a])), append(s.Y, l.Ratio.Value)
			s.Lo, s.Hi = append(s.Lo, l.Ratio.Lo), append(s.Hi, l.Ratio.Hi)
		}
	}
	// Dodge: the series' points at one axis value side by side, so that
	// their error bars do not hide one another.
	for k := range series {
		off := dodge * (float64(k) - float64(len(series)-1)/2)
		for i := range series[k].X {
			series[k].X[i] += off
		}
	}
	return series, mults
}

// dodge is the horizontal offset between series, in axis steps.
const dodge = 0.04

// lengthLabel names the multipliers a plot's points were read at ("16T").
func lengthLabel(mults map[int]bool) string {
	var s string
	for m := 1; m <= 1<<20; m *= 2 {
		if mults[m] {
			if s != "" {
				s += "/"
			}
			s += fmt.Sprintf("%dT", m)
		}
	}
	return s
}

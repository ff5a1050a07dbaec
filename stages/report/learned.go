package report

import (
	"fmt"
	"math"
	"strings"

	"routebench/modelspec"
	"routebench/modelspec/weights"
	"routebench/pipeline"
)

// How far a learned variant's angle table moved from the random table it
// was initialised with (the same seeded draw, modelspec.RandomAngleTable):
// if it barely moved, a "learned" variant is the random one with a small
// correction, and its results must be read that way.

// angleShift compares a trained table with its initial values, both
// [V][H][P] flattened.
type angleShift struct {
	Rel     float64   // ||a - a0|| / ||a0|| over the whole table
	PairRel []float64 // the same per pair p (over tokens and heads)
	MaxAbs  float64   // largest |a - a0| (rad)
	Moved   float64   // fraction of entries that changed at all (tokens never seen keep their values)
}

func shiftOf(trained, initial []float32, P int) angleShift {
	var s angleShift
	num, den := make([]float64, P), make([]float64, P)
	moved := 0
	for i, a := range trained {
		d := float64(a) - float64(initial[i])
		num[i%P] += d * d
		den[i%P] += float64(initial[i]) * float64(initial[i])
		s.MaxAbs = math.Max(s.MaxAbs, math.Abs(d))
		if d != 0 {
			moved++
		}
	}
	var n, dd float64
	for p := range num {
		s.PairRel = append(s.PairRel, math.Sqrt(num[p]/den[p]))
		n, dd = n+num[p], dd+den[p]
	}
	s.Rel = math.Sqrt(n / dd)
	s.Moved = float64(moved) / float64(len(trained))
	return s
}

// learnedShift reads a learned variant's trained table from its weights
// and redraws the initial one from its training config; nil for variants
// without a trained table.
func learnedShift(rc *pipeline.RunContext, name string, rep *modelspec.TrainReport) (*angleShift, error) {
	v, err := modelspec.LookupVariant(name)
	if err != nil || !v.Learned || rep == nil {
		return nil, err
	}
	art, ok := rc.Inputs[trainInput(name)]
	if !ok {
		return nil, nil
	}
	path, err := art.Path(modelspec.WeightsFile)
	if err != nil {
		return nil, err
	}
	set, err := weights.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("report: weights of %s: %w", name, err)
	}
	c := rep.Config
	P := c.DModel / c.Heads / 2
	trained, err := set.Get("angles", c.Vocab, c.Heads, P)
	if err != nil {
		return nil, fmt.Errorf("report: weights of %s: %w", name, err)
	}
	s := shiftOf(trained, modelspec.RandomAngleTable(c.Vocab, c.Heads, P, c.SigmaMax, c.SigmaMin, c.Seed), P)
	return &s, nil
}

func renderLearnedShift(b *strings.Builder, vs []*variantData) {
	var rows []string
	for _, v := range vs {
		if s := v.angleShift; s != nil {
			rows = append(rows, fmt.Sprintf("| %s | %.2f%% | %.2f%% | %.2f%% | %.3f | %.1f%% |", v.name, 100*s.Rel,
				100*s.PairRel[0], 100*s.PairRel[len(s.PairRel)-1], s.MaxAbs, 100*s.Moved))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nHow far the learned angle tables moved from their random initialisation (the same seeded table " +
		"random-* use): relative norm of the change, over the whole table and for the fastest (p = 0) and slowest " +
		"(p = P-1) pair, the largest change of one entry, and the share of entries that changed (a token never seen in " +
		"training keeps its initial angles).\n\n| variant | relative change | fastest pair | slowest pair | max change (rad) | entries changed |\n|---|---|---|---|---|---|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n")
}

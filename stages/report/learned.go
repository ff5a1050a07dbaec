package report

import (
	"fmt"
	"math"
	"strings"

	"routebench/modelspec"
	"routebench/modelspec/weights"
	"routebench/pipeline"
)

// How far a learned variant's angle table moved from the table it was
// initialised with (modelspec.InitialAngles: zeros for learned-*, the
// random table random-* use for learned-*-randinit): if it barely moved
// from the random table, a "learned" variant is the random one with a small
// correction, and its results must be read that way; from zeros, the
// angles it reached are all it learned.

// angleShift compares a trained table with its initial values, both
// [V][H][P] flattened.
type angleShift struct {
	Init    string    // the variant's AngleInit
	Rel     float64   // ||a - a0|| / ||a0|| over the whole table; NaN for a zero a0
	RMS     float64   // root mean square change over the entries that changed (rad)
	PairRMS []float64 // the same per pair p (over tokens and heads)
	MaxAbs  float64   // largest |a - a0| (rad)
	Moved   float64   // fraction of entries that changed at all (tokens never seen keep their values)
}

func shiftOf(trained, initial []float32, P int) angleShift {
	s := angleShift{Rel: math.NaN()}
	num, cnt := make([]float64, P), make([]int, P)
	var den float64
	for i, a := range trained {
		d := float64(a) - float64(initial[i])
		den += float64(initial[i]) * float64(initial[i])
		s.MaxAbs = math.Max(s.MaxAbs, math.Abs(d))
		if d != 0 {
			num[i%P] += d * d
			cnt[i%P]++
		}
	}
	var n float64
	var moved int
	for p := range num {
		s.PairRMS = append(s.PairRMS, math.Sqrt(num[p]/math.Max(float64(cnt[p]), 1)))
		n, moved = n+num[p], moved+cnt[p]
	}
	if den > 0 {
		s.Rel = math.Sqrt(n / den)
	}
	s.RMS = math.Sqrt(n / math.Max(float64(moved), 1))
	s.Moved = float64(moved) / float64(len(trained))
	return s
}

// learnedShift reads a learned variant's trained table from its weights
// and rebuilds the initial one from its training config; nil for variants
// without a trained table. name is the run's (variant and seed suffix).
func learnedShift(rc *pipeline.RunContext, variant, name string, rep *modelspec.TrainReport) (*angleShift, error) {
	v, err := modelspec.LookupVariant(variant)
	if err != nil || !v.Learned || rep == nil {
		return nil, err
	}
	set, err := trainedWeights(rc, name)
	if set == nil || err != nil {
		return nil, err
	}
	c := rep.Config
	P := c.DModel / c.Heads / 2
	trained, err := set.Get(modelspec.AngleTable, c.Vocab, c.Heads, P)
	if err != nil {
		return nil, fmt.Errorf("report: weights of %s: %w", name, err)
	}
	s := shiftOf(trained, modelspec.InitialAngles(c), P)
	s.Init = v.AngleInit
	return &s, nil
}

// trainedWeights reads a run's exported weights; nil when the plan has no
// train input for it.
func trainedWeights(rc *pipeline.RunContext, name string) (*weights.Set, error) {
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
	return set, nil
}

// angleProjSize is how large learned-proj-qkv's angle projections grew from
// their zero start: per block the RMS of W_ang's entries, and sqrt(D) times
// it, the RMS angle per token (rad) that a block input with independent
// unit-RMS entries would get (E theta_k^2 = sum_j W_jk^2). The angles of the
// held-out tokens themselves would need the evaluation stage's activations;
// this is the weights-only estimate.
type angleProjSize struct {
	D        int
	LayerRMS []float64
}

func projSizeOf(layers [][]float32, D int) *angleProjSize {
	s := &angleProjSize{D: D}
	for _, w := range layers {
		var ss float64
		for _, x := range w {
			ss += float64(x) * float64(x)
		}
		s.LayerRMS = append(s.LayerRMS, math.Sqrt(ss/math.Max(float64(len(w)), 1)))
	}
	return s
}

// learnedProjection reads the trained angle projections of a projected
// variant; nil for the other variants.
func learnedProjection(rc *pipeline.RunContext, variant, name string, rep *modelspec.TrainReport) (*angleProjSize, error) {
	v, err := modelspec.LookupVariant(variant)
	if err != nil || !v.AngleProj || rep == nil {
		return nil, err
	}
	set, err := trainedWeights(rc, name)
	if set == nil || err != nil {
		return nil, err
	}
	c := rep.Config
	var layers [][]float32
	for l := 0; l < c.Layers; l++ {
		w, err := set.Get(fmt.Sprintf("block%03d/%s", l, modelspec.AngleProjName), c.DModel, c.DModel/2)
		if err != nil {
			return nil, fmt.Errorf("report: weights of %s: %w", name, err)
		}
		layers = append(layers, w)
	}
	return projSizeOf(layers, c.DModel), nil
}

func renderAngleProj(b *strings.Builder, vs []*variantData) {
	var rows []string
	for _, v := range vs {
		s := v.angleProj
		if s == nil {
			continue
		}
		lr := 1.0
		if vv, err := modelspec.LookupVariant(v.variant); err == nil {
			lr = vv.LRScale("block000/" + modelspec.AngleProjName)
		}
		for l, r := range s.LayerRMS {
			rows = append(rows, fmt.Sprintf("| %s | %d | x%g | %.4f | %.3f |", v.name, l, lr, r, math.Sqrt(float64(s.D))*r))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nHow large the learned angle projections W_ang [D, H*P] grew from zero (learned-proj-qkv: theta_t = a_t W_ang " +
		"per block, a_t the normed block input), at their angle learning-rate factor: the RMS of W_ang's entries, and sqrt(D) " +
		"times it, the RMS angle per token (rad) an input with independent unit-RMS entries would get (a weights-only " +
		"estimate; the held-out tokens' own angles are not measured).\n\n" +
		"| variant | block | angle lr | RMS of W_ang | isotropic angle per token (rad) |\n|---|---|---|---|---|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n")
}

func renderLearnedShift(b *strings.Builder, vs []*variantData) {
	var rows []string
	sigma := ""
	for _, v := range vs {
		s := v.angleShift
		if s == nil {
			continue
		}
		rel := "-"
		if !math.IsNaN(s.Rel) {
			rel = fmt.Sprintf("%.2f%%", 100*s.Rel)
		}
		lr := 1.0
		if vv, err := modelspec.LookupVariant(v.variant); err == nil {
			lr = vv.LRScale(modelspec.AngleTable)
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | x%g | %s | %.3f | %.3f | %.3f | %.3f | %.1f%% |", v.name, s.Init, lr, rel,
			s.RMS, s.PairRMS[0], s.PairRMS[len(s.PairRMS)-1], s.MaxAbs, 100*s.Moved))
	}
	if len(rows) == 0 {
		return
	}
	// The sigmas are those of a variant that draws its table from them (a
	// zero-started table's config carries none: Config.Normalized).
	for _, v := range vs {
		if v.train != nil && len(v.train.AngleSigmas) > 0 {
			c := v.train.Config
			sigma = fmt.Sprintf(" (random-* draw them with sigma %.2f for the fastest pair and %.2f for the slowest)", c.SigmaMax, c.SigmaMin)
			break
		}
	}
	b.WriteString("\nHow far the learned angle tables moved from their initialisation (zero: a zero table, every angle " +
		"learned; random: the seeded table random-* use), at their angle learning-rate factor: relative norm of the " +
		"change (for a random start), root mean square change of the entries that changed, overall and for the fastest " +
		"(p = 0) and slowest (p = P-1) pair, in radians" + sigma + ", the largest change of one entry, and the share of " +
		"entries that changed (a token never seen in training keeps its initial angles).\n\n" +
		"| variant | init | angle lr | relative change | RMS change (rad) | fastest pair | slowest pair | max change (rad) | entries changed |\n" +
		"|---|---|---|---|---|---|---|---|---|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n")
}

package nativetrain

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"routebench/modelspec"
)

// testConfig is a small config of variant v: head dim 16, T = 128 (two
// 64-wide panels, so the causal tile skipping is exercised), 2 windows.
func testConfig(v string) modelspec.Config {
	return modelspec.Config{Variant: v, Profile: "smoke", Vocab: 257, Backend: "go",
		DModel: 32, Layers: 2, Heads: 2, DHidden: 128, Context: 128, Batch: 2, Steps: 10, Warmup: 2,
		LR: 3e-3, MinLR: 1e-4, WeightDecay: 0.01, Clip: 1.0, SigmaMax: 1.0, SigmaMin: 0.35, Seed: 1,
		CheckpointEvery: 5, EvalEvery: 5, EvalBatches: 1}
}

// newTestTrainer builds a trainer for c with seeded random parameters
// (gains near 1, weights of scale 0.1 so that attention is not uniform),
// zero moments and, for random-* variants, the seeded fixed table.
func newTestTrainer(tb testing.TB, c modelspec.Config, workers int) *Trainer {
	tb.Helper()
	v, err := modelspec.LookupVariant(c.Variant)
	if err != nil {
		tb.Fatal(err)
	}
	shapes := paramShapes(c, v)
	names := make([]string, 0, len(shapes))
	for n := range shapes {
		names = append(names, n)
	}
	slices.Sort(names)
	var ps []Param
	for _, n := range names {
		ps = append(ps, Param{Name: n, Shape: shapes[n], Decay: len(shapes[n]) == 2})
	}
	var table []float32
	if v.HasAngleTable() && !v.Learned {
		table = modelspec.RandomAngleTable(c.Vocab, c.Heads, c.DModel/c.Heads/2, c.SigmaMax, c.SigmaMin, c.Seed)
	}
	tr, err := New(c, ps, table, workers)
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(c.Seed, 42))
	vals, zeros := make([][]float32, len(ps)), make([][]float32, len(ps))
	for i, p := range ps {
		vals[i], zeros[i] = make([]float32, size(p.Shape)), make([]float32, size(p.Shape))
		gain := strings.Contains(p.Name, "norm")
		kerple := strings.Contains(p.Name, "kerple_") // KERPLE's p, a: above the floor, where they get a gradient
		for j := range vals[i] {
			vals[i][j] = float32(0.1 * r.NormFloat64())
			switch {
			case gain:
				vals[i][j] += 1
			case kerple:
				vals[i][j] = float32(math.Abs(float64(vals[i][j]))) + 0.5
			}
		}
	}
	if err := tr.SetState(vals, zeros, zeros); err != nil {
		tb.Fatal(err)
	}
	return tr
}

// testBatch is a seeded batch of rows windows of c.Context tokens.
func testBatch(c modelspec.Config, rows int, seed uint64) (tok, tgt []int32) {
	r := rand.New(rand.NewPCG(seed, 7))
	n := rows * c.Context
	tok, tgt = make([]int32, n), make([]int32, n)
	for i := range tok {
		tok[i], tgt[i] = int32(r.IntN(c.Vocab)), int32(r.IntN(c.Vocab))
	}
	return tok, tgt
}

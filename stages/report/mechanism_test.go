package report

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"routebench/stages/evaluate"
)

// mechRun is a synthetic run at T = 4 with lengths T..16T: per window far
// mass far(L) and far coherence coh(L), with window noise.
func mechRun(r *rand.Rand, variant string, far, coh func(L int) float64) *evaluate.Result {
	const T, W = 4, 8
	res := &evaluate.Result{Variant: variant, Protocol: evaluate.Config{Context: T}, Mechanism: &evaluate.Mechanism{Queries: 8, Far: T}}
	for m := 1; m <= 16; m *= 2 {
		L := m * T
		res.Lengths = append(res.Lengths, evaluate.LengthResult{L: L, Multiplier: m})
		ml := evaluate.MechanismLength{L: L, BoundRows: 10, BoundHeld: 10}
		if m > 1 {
			for range W {
				ml.FarMass = append(ml.FarMass, far(L)+0.01*r.NormFloat64())
				ml.FarCoherence = append(ml.FarCoherence, coh(L)+0.01*r.NormFloat64())
				ml.Bound = append(ml.Bound, 0.001)
			}
		}
		ml.Heads = []evaluate.MechanismHead{{Bins: []evaluate.MechanismBin{{Lo: 0, Hi: 0, Mass: 0.5}, {Lo: 1, Hi: 1, Mass: 0.5}}}}
		res.Mechanism.Lengths = append(res.Mechanism.Lengths, ml)
	}
	return res
}

func mechSeeds(alibiGrowth, qkvCoh float64) []map[string]*evaluate.Result {
	r := rand.New(rand.NewPCG(4, 39))
	var per []map[string]*evaluate.Result
	for range 5 {
		per = append(per, map[string]*evaluate.Result{
			"random-qk":  mechRun(r, "random-qk", func(L int) float64 { return 0.1 + 0.01*float64(L) }, func(int) float64 { return 0.8 }),
			"random-qkv": mechRun(r, "random-qkv", func(L int) float64 { return 0.1 + 0.01*float64(L) }, func(int) float64 { return qkvCoh }),
			"alibi":      mechRun(r, "alibi", func(L int) float64 { return 0.02 + alibiGrowth*float64(L)/64 }, func(int) float64 { return 0.9 }),
		})
	}
	return per
}

// TestClaimsV4M: M1 and M2 reproduce on data built to satisfy them, each
// fails when its control passes its criterion (ALiBi's far mass growing as
// much; a coherence gap that is not transport's), and M3 is not tested
// without route windows.
func TestClaimsV4M(t *testing.T) {
	seeds := []uint64{21, 22, 23, 24, 25}
	claims, dec := ClaimsV4M(mechSeeds(0.01, 0.3), seeds)
	if len(claims) != 3 {
		t.Fatalf("%d claims, want 3", len(claims))
	}
	if claims[0].Verdict != "REPRODUCED" || claims[1].Verdict != "REPRODUCED" {
		t.Fatalf("M1 %s (%s), M2 %s (%s): want both reproduced", claims[0].Verdict, claims[0].Evidence, claims[1].Verdict, claims[1].Evidence)
	}
	if claims[2].Verdict != "NOT TESTED" || dec[2].Holm != "NOT TESTED" {
		t.Errorf("M3 %s without route windows", claims[2].Verdict)
	}
	if !strings.Contains(claims[0].Evidence, "fails the criterion, as it must") {
		t.Errorf("M1 evidence does not report its control: %s", claims[0].Evidence)
	}
	// ALiBi growing as much as rotation: the control passes, M1 fails.
	claims, _ = ClaimsV4M(mechSeeds(0.64, 0.3), seeds)
	if claims[0].Verdict == "REPRODUCED" || !strings.Contains(claims[0].Evidence, "passes the criterion") {
		t.Errorf("M1 %s with ALiBi's growth as large as rotation's: %s", claims[0].Verdict, claims[0].Evidence)
	}
	// Transport no different from Q/K only: M2 fails.
	claims, _ = ClaimsV4M(mechSeeds(0.01, 0.8), seeds)
	if claims[1].Verdict == "REPRODUCED" {
		t.Errorf("M2 reproduced with equal coherence: %s", claims[1].Evidence)
	}
	// Rendering names the claims and the bound rows.
	var b strings.Builder
	renderV4M(&b, claims, dec, seeds, V4MSuffix, "v4m")
	if !strings.Contains(b.String(), "far-mass-grows") {
		t.Errorf("render: %s", b.String())
	}
}

// TestTidyMechanism: the mechanism figures reach the tidy rows, per
// window and as the mean with its interval, the copy probe's gap in the
// gap column (its L none).
func TestTidyMechanism(t *testing.T) {
	r := mechRun(rand.New(rand.NewPCG(1, 1)), "random-qk", func(int) float64 { return 0.5 }, func(int) float64 { return 0.4 })
	r.Copy = &evaluate.CopyProbe{Gaps: []evaluate.CopyGap{{D: 64, Gain: []float64{0.1, 0.3}, ControlGain: []float64{0.05, 0.15}}, {D: 128, Gain: []float64{0.4}}}}
	base := tidyRow{Level: LevelSeed, Variant: "random-qk", L: none, Distance: none, PosStart: none, PosEnd: none, Gap: none, Window: none, Seeds: none}
	r.Format = evaluate.CopyControlFormat - 1 // format 5's in-gap control: no controlled rows
	if old := appendMechanismRows(nil, base, r); slices.ContainsFunc(old, func(x tidyRow) bool { return x.Metric == "copy_gain_controlled" }) {
		t.Errorf("format 5's confounded control reaches the tidy rows")
	}
	r.Format = evaluate.FormatVersion
	rows := appendMechanismRows(nil, base, r)
	count := map[string]int{}
	for _, x := range rows {
		count[x.Metric]++
		if x.Metric == "copy_gain" && x.Level == LevelSeed && x.Gap == 64 && math.Abs(x.Value-0.2) > 1e-12 {
			t.Errorf("copy gain row %+v, want the mean 0.2 at gap 64", x)
		}
		if x.Metric == "copy_gain_controlled" && (x.Gap != 64 || x.L != none || x.Level == LevelSeed && math.Abs(x.Value-0.1) > 1e-12 ||
			x.Level == LevelWindow && x.Window == 1 && x.Value != 0.15) {
			t.Errorf("controlled copy gain row %+v, want the mean 0.1 and probe 1 at 0.15 at gap 64, no L", x)
		}
		if x.Metric == "far_mass_probe" && x.Distance != r.Mechanism.Far {
			t.Errorf("far mass row %+v, want the probe's far threshold %d as its distance", x, r.Mechanism.Far)
		}
	}
	// 4 lengths past T with 8 windows: 4 x (1 mean + 8 windows); none at T.
	// The gap 128 has no control (format 4): raw rows only.
	if count["far_mass_probe"] != 4*9 || count["copy_gain"] != 3+2 || count["copy_gain_controlled"] != 3 {
		t.Errorf("rows by metric %v", count)
	}
}

// TestBinCurveSkipsEmptyMass: a bin with no mass (log -Inf) is left out of
// the curve, never drawn as an infinite point.
func TestBinCurveSkipsEmptyMass(t *testing.T) {
	r := mechRun(rand.New(rand.NewPCG(2, 2)), "path-fox", func(int) float64 { return 0 }, func(int) float64 { return 0 })
	for k := range r.Mechanism.Lengths {
		r.Mechanism.Lengths[k].Heads[0].Bins[1].Mass = 0
		r.Mechanism.Lengths[k].Heads[0].Bins[0].Uniform = 0.5
		r.Mechanism.Lengths[k].Heads[0].Bins[1].Uniform = 0.5
	}
	xs, ys := binCurve([]*evaluate.Result{r}, 64, func(b evaluate.MechanismBin) float64 { return math.Log2(b.Mass / b.Uniform) })
	if len(xs) != 1 || math.IsInf(ys[0], 0) {
		t.Fatalf("curve %v %v, want the one finite bin", xs, ys)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "results"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mechanismPlots([]*variantData{{variant: "path-fox", eval: r}}, dir); err != nil {
		t.Fatalf("plots of a run with an empty bin: %v", err)
	}
}

package evaluate

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"routebench/model/nativeeval"
	"routebench/modelspec"
	"routebench/modelspec/weights/weightstest"
	"routebench/pipeline"
	"routebench/stages/tokenize/shards"
)

func TestProbeQueries(t *testing.T) {
	c := Config{Context: 512, ProbeQueries: 8}
	if got, want := c.probeQueries(512), []int{32, 96, 160, 224, 288, 352, 416, 480}; !slices.Equal(got, want) {
		t.Fatalf("queries at T: %v, want %v", got, want)
	}
	if got := c.probeQueries(1024); got[0] != 544 || got[7] != 992 {
		t.Fatalf("queries at 2T: %v, want 544..992 (the last T positions)", got)
	}
	c.RopeScaling = "yarn"
	if c.probeQueries(1024) != nil || c.newProbeSums() != nil {
		t.Fatal("an inference-time RoPE extension runs the probe")
	}
}

func row(layer, head, q int, far, bound, coh float64) nativeeval.ProbeRow {
	return nativeeval.ProbeRow{Layer: layer, Head: head, Query: q, FarMass: far, Bound: bound, FarCoherence: coh, Far: 1,
		Bins: []nativeeval.ProbeBinStats{{Sources: 1, Mass: 1 - far, LogitMean: 1}, {Sources: 1, Mass: far, LogitMean: -1, Coherence: coh}}}
}

// TestMechanismSummary checks the per-window means (the v4m claims'
// values), the per-head bins, the bound count and the refusal of a row
// that is not the model's.
func TestMechanismSummary(t *testing.T) {
	p := &probeSums{}
	p.add([]nativeeval.ProbeRow{row(0, 0, 5, 0.2, 0.1, 0.5), row(0, 1, 5, 0.4, 0.5, 0.7)})
	p.add([]nativeeval.ProbeRow{row(0, 0, 5, 0.6, 0.1, 0.3), row(0, 1, 5, 0.8, 0.1, 0.1)})
	ml, err := p.summarize(2, 1)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b []float64) bool {
		for k := range a {
			if math.Abs(a[k]-b[k]) > 1e-12 {
				return false
			}
		}
		return len(a) == len(b)
	}
	if !near(ml.FarMass, []float64{0.3, 0.7}) || !near(ml.FarCoherence, []float64{0.6, 0.2}) {
		t.Fatalf("per-window far mass %v, coherence %v; want [0.3 0.7], [0.6 0.2]", ml.FarMass, ml.FarCoherence)
	}
	if want := []float64{(0.2*0.5 + 0.4*0.7) / 0.6, (0.6*0.3 + 0.8*0.1) / 1.4}; !near(ml.FarCoherenceWeighted, want) {
		t.Fatalf("per-window mass-weighted coherence %v, want %v", ml.FarCoherenceWeighted, want)
	}
	if ml.BoundRows != 4 || ml.BoundHeld != 3 {
		t.Fatalf("bound held %d of %d rows, want 3 of 4", ml.BoundHeld, ml.BoundRows)
	}
	if len(ml.Heads) != 2 || math.Abs(ml.Heads[0].FarMass-0.4) > 1e-12 || ml.Heads[1].Bins[1].Lo != 1 || math.Abs(ml.Heads[1].Bins[1].Mass-0.6) > 1e-12 {
		t.Fatalf("heads %+v", ml.Heads)
	}
	bad := row(1, 0, 5, 0.1, 0, 0)
	bad.OutErr = 0.5
	p.add([]nativeeval.ProbeRow{bad})
	if _, err := p.summarize(2, 1); err == nil || !strings.Contains(err.Error(), "layer 1, head 0, query 5") {
		t.Fatalf("a row 50%% off the streaming output was accepted (err %v)", err)
	}
}

// TestWeightedCoherenceIgnoresEmptyRows: a row with 1e-6 far mass and
// coherence 0 beside one with 0.9 and coherence 0.8 moves the mass-weighted
// coherence (M2') by about 1e-6, the unweighted one (v4m's M2) by half:
// the control that the weighting is not the plain mean.
func TestWeightedCoherenceIgnoresEmptyRows(t *testing.T) {
	p := &probeSums{}
	p.add([]nativeeval.ProbeRow{row(0, 0, 5, 0.9, 0, 0.8), row(0, 1, 5, 1e-6, 0, 0)})
	ml, err := p.summarize(2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w := ml.FarCoherenceWeighted[0]; math.Abs(w-0.8) > 1e-5 {
		t.Fatalf("mass-weighted coherence %v, want 0.8 within 1e-5 (the empty row weighs 1e-6)", w)
	}
	if u := ml.FarCoherence[0]; math.Abs(u-0.4) > 1e-12 {
		t.Fatalf("unweighted coherence %v, want 0.4 (the control: the empty row counts fully)", u)
	}
}

func TestSplitProbe(t *testing.T) {
	rows := []nativeeval.ProbeRow{{Query: 3}, {Query: 7}, {Query: 3, Head: 1}, {Query: 9}}
	got := splitProbe(rows, []int{3, 9})
	if len(got) != 3 || got[2].Query != 9 {
		t.Fatalf("split %+v", got)
	}
}

// TestPrefixDesignProbe: under DesignPrefixes the mechanism probe of every
// length (T included: the long windows' first T positions) equals a probe
// of each prefix window on its own, and the independent design probes
// each length's own windows; every length has one value per window.
func TestPrefixDesignProbe(t *testing.T) {
	ds := prefixDataset(t)
	const T = 16
	for _, design := range []string{DesignPrefixes, DesignIndependent} {
		t.Run("design="+design, func(t *testing.T) {
			a := modelspec.Config{Variant: "random-qkv", Profile: "test", Vocab: 257, DModel: 32, Layers: 2, Heads: 2, DHidden: 48, Context: T}.Arch()
			set := weightstest.RandomSet(t, a, 5)
			cfg := NewConfig("random-qkv", "test", T, []int{1, 2, 4, 8}, 4, 3)
			cfg.Design = design
			rc := &pipeline.RunContext{Context: context.Background(), Logf: t.Logf, Progress: func(int64, int64, string) {}}
			res, _, err := evaluate(rc, cfg, set, ds)
			if err != nil {
				t.Fatal(err)
			}
			if res.Mechanism == nil || len(res.Mechanism.Lengths) != 4 {
				t.Fatalf("mechanism %+v, want 4 lengths", res.Mechanism)
			}
			for _, ml := range res.Mechanism.Lengths {
				if ml.BoundRows != 4*2*2*8 || ml.BoundHeld != ml.BoundRows {
					t.Errorf("L=%d: bound held in %d of %d rows, want all of 4 windows x 2 layers x 2 heads x 8 queries", ml.L, ml.BoundHeld, ml.BoundRows)
				}
				if ml.L == T {
					if len(ml.FarMass) != 0 {
						t.Errorf("T: far mass %v at queries that see nothing beyond T", ml.FarMass)
					}
					continue
				}
				if len(ml.FarMass) != 4 {
					t.Fatalf("L=%d: %d window values, want 4", ml.L, len(ml.FarMass))
				}
			}
			if design != DesignPrefixes {
				return
			}
			m, err := nativeeval.Load(set)
			if err != nil {
				t.Fatal(err)
			}
			held, _ := ds.Tokens(shards.SplitHeldOut)
			for _, ml := range res.Mechanism.Lengths[1:] {
				for w, sp := range res.Spans {
					win := make([]int32, sp.Tokens)
					if err := held.Read(win, sp.Offset); err != nil {
						t.Fatal(err)
					}
					out, err := m.LogProbs(context.Background(), win[:ml.L], nil, nativeeval.Options{ProbeQueries: cfg.probeQueries(ml.L), ProbeFar: T})
					if err != nil {
						t.Fatal(err)
					}
					var far float64
					for _, r := range out.Probe {
						far += r.FarMass
					}
					far /= float64(len(out.Probe))
					if math.Abs(far-ml.FarMass[w]) > 1e-9 {
						t.Errorf("L=%d window %d: far mass %.9f, the prefix window's own probe %.9f", ml.L, w, ml.FarMass[w], far)
					}
				}
			}
		})
	}
}

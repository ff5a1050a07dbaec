package evaluate

import (
	"fmt"
	"math"

	"routebench/model/nativeeval"
	"routebench/modelspec/weights"
	"routebench/pipeline"
	"routebench/stages/tokenize"
)

// Result is the content of eval.json.
type Result struct {
	Variant  string         `json:"variant"`
	Profile  string         `json:"profile"`
	Protocol Config         `json:"protocol"`
	Lengths  []LengthResult `json:"lengths"`
}

// LengthResult is one evaluation length.
type LengthResult struct {
	L          int       `json:"length"`
	Multiplier int       `json:"multiplier"`
	PPL        Interval  `json:"ppl"`
	Ratio      Interval  `json:"ratio"` // PPL(L) / PPL(T)
	WindowLoss []float64 `json:"window_loss"`
	Buckets    []Bucket  `json:"buckets"`
	FarMass    []FarMass `json:"far_mass"`
	Entropy    float64   `json:"entropy"` // mean attention entropy (nats), over layers, heads, queries
}

// FarMass is the mean attention mass beyond Distance, averaged over layers,
// heads and queries, with the spread of the per-head means.
type FarMass struct {
	Distance int     `json:"distance"`
	Heads    int     `json:"heads"` // (window, layer, head) stats with queries that far; 0: none at this length
	Mean     float64 `json:"mean"`
	HeadMin  float64 `json:"head_min"` // smallest per-(layer, head) mean
	HeadMax  float64 `json:"head_max"` // largest
	P50      float64 `json:"p50"`      // median over queries, averaged over heads
	P95      float64 `json:"p95"`
}

func evaluate(rc *pipeline.RunContext, cfg Config, set *weights.Set, ds *tokenize.Dataset) (*Result, int64, error) {
	m, err := nativeeval.Load(set)
	if err != nil {
		return nil, 0, fmt.Errorf("evaluate/%s: %w", cfg.Variant, err)
	}
	var total, done int64
	for _, mult := range cfg.Multipliers {
		total += int64(cfg.Windows * mult * cfg.Context)
	}
	res := &Result{Variant: cfg.Variant, Profile: cfg.Profile, Protocol: cfg}
	var base []float64
	for li, mult := range cfg.Multipliers {
		L := mult * cfg.Context
		windows, err := ds.EvalWindows(cfg.Seed+uint64(L), L, cfg.Windows)
		if err != nil {
			return nil, done, fmt.Errorf("evaluate/%s at length %d: %w", cfg.Variant, L, err)
		}
		lr := LengthResult{L: L, Multiplier: mult}
		var perPos [][]float32
		var diags [][]nativeeval.HeadStats
		for w, win := range windows {
			opts := nativeeval.Options{}
			if w < cfg.FarWindows {
				opts.FarDistances = cfg.FarDistances
			}
			out, err := m.LogProbs(rc.Context, win[:L], win[1:L+1], opts)
			if err != nil {
				return nil, done, fmt.Errorf("evaluate/%s, length %d, window %d: %w", cfg.Variant, L, w, err)
			}
			loss := make([]float32, L)
			s := 0.0
			for i, lp := range out.LogProbs {
				loss[i] = -float32(lp)
				s -= float64(lp)
			}
			mean := s / float64(L)
			if math.IsNaN(mean) || math.IsInf(mean, 0) {
				return nil, done, fmt.Errorf("evaluate/%s, length %d, window %d: loss is %v", cfg.Variant, L, w, mean)
			}
			lr.WindowLoss = append(lr.WindowLoss, mean)
			perPos = append(perPos, loss)
			if len(out.Heads) > 0 {
				diags = append(diags, out.Heads)
			}
			done += int64(L)
			rc.Progress(done, total, fmt.Sprintf("L=%d window %d/%d", L, w+1, len(windows)))
		}
		seed := cfg.Seed ^ uint64(L)*0x9e3779b97f4a7c15
		lr.PPL = PPLInterval(lr.WindowLoss, seed)
		if li == 0 {
			base = lr.WindowLoss
		}
		lr.Ratio = RatioInterval(lr.WindowLoss, base, seed)
		lr.Buckets = PositionBuckets(perPos, cfg.Context)
		lr.FarMass, lr.Entropy = summarizeDiagnostics(diags, cfg.FarDistances)
		res.Lengths = append(res.Lengths, lr)
		rc.Logf("L=%d: PPL %s, ratio %s", L, lr.PPL, lr.Ratio)
	}
	return res, done, nil
}

// summarizeDiagnostics averages the per-head statistics over windows,
// layers and heads.
func summarizeDiagnostics(diags [][]nativeeval.HeadStats, dists []int) ([]FarMass, float64) {
	if len(diags) == 0 {
		return nil, 0
	}
	out := make([]FarMass, len(dists))
	var ent float64
	n := 0
	for k, D := range dists {
		fm := FarMass{Distance: D, HeadMin: math.Inf(1), HeadMax: math.Inf(-1)}
		cnt := 0
		for _, heads := range diags {
			for _, h := range heads {
				f := h.Far[k]
				if f.N == 0 {
					continue // no query has sources that far at this length
				}
				fm.Mean += f.Mean
				fm.P50 += f.Quantiles[2]
				fm.P95 += f.Quantiles[4]
				fm.HeadMin = math.Min(fm.HeadMin, f.Mean)
				fm.HeadMax = math.Max(fm.HeadMax, f.Mean)
				cnt++
			}
		}
		if cnt == 0 {
			fm = FarMass{Distance: D}
		} else {
			fm.Mean /= float64(cnt)
			fm.P50 /= float64(cnt)
			fm.P95 /= float64(cnt)
			fm.Heads = cnt
		}
		out[k] = fm
	}
	for _, heads := range diags {
		for _, h := range heads {
			ent += h.Entropy.Mean
			n++
		}
	}
	return out, ent / float64(n)
}

package evaluate

import (
	"fmt"
	"slices"

	"routebench/model/nativeeval"
	"routebench/stages/tokenize/shards"
)

// Window designs (Config.Design).
const (
	// DesignIndependent (the empty default): every length draws its own
	// windows over the held-out stream (shards.EvalWindows).
	DesignIndependent = ""
	// DesignPrefixes: Windows non-overlapping windows at the longest
	// length, stratified over the held-out documents
	// (shards.EvalWindowsStratified); every length from 2T up to the
	// longest is scored on the first L positions of those windows, from
	// one forward pass each (a causal model's loss on a window's first L
	// positions is an L-window's loss, and its diagnostics are summarised
	// over those queries: nativeeval.Options.Prefixes); T, the paper
	// ratio's denominator, keeps its own WindowsAt(T) windows drawn
	// off the long ones (shards.EvalWindowsAvoiding). It scores the long
	// windows once instead of a window set per length, which is what
	// makes 8 windows at 128T affordable (docs/statistics.md, claims v3).
	DesignPrefixes = "prefixes"
)

// lengthScores are one length's per-window losses, diagnostics (first
// FarWindows windows) and PaTH step sums, and the windows' tokens (at
// least L+1 each; the context gain's short passes read them).
type lengthScores struct {
	losses  [][]float64
	diags   [][]nativeeval.HeadStats
	steps   *stepSums
	windows [][]int32
	probes  *probeSums // the mechanism probe's rows; nil without it
}

// longest is the longest evaluation length.
func (c Config) longest() int { return c.Context * slices.Max(c.Multipliers) }

// scorePrefixes scores DesignPrefixes: the long windows once, every
// length between T and the longest from their prefixes, T on its own
// windows. It returns the scores by length and the long windows' spans.
func (s *scorer) scorePrefixes(ds *shards.Dataset, path bool) (map[int]lengthScores, []shards.Span, error) {
	cfg := s.cfg
	T, Lmax := cfg.Context, cfg.longest()
	long, spans, err := ds.EvalWindowsStratified(cfg.Seed, Lmax, cfg.Windows)
	if err != nil {
		return nil, nil, fmt.Errorf("%s at length %d: %w", cfg.stageName(), Lmax, err)
	}
	var prefixes []int
	for _, m := range cfg.Multipliers {
		if L := m * T; L > T && L < Lmax {
			prefixes = append(prefixes, L)
		}
	}
	out := map[int]lengthScores{}
	at := func(L int) lengthScores {
		sc := out[L]
		if path && sc.steps == nil {
			sc.steps = &stepSums{}
		}
		if sc.probes == nil {
			sc.probes = cfg.newProbeSums()
		}
		return sc
	}
	// The probe's queries of every length, T's among them (the long
	// windows' first T positions), from the one pass.
	var probeQ []int
	for _, L := range append([]int{T}, append(slices.Clone(prefixes), Lmax)...) {
		probeQ = append(probeQ, cfg.probeQueries(L)...)
	}
	probeT := cfg.newProbeSums()
	for w, win := range long {
		if cfg.RopeScaling != "" {
			if err := s.scoreScaledPrefixes(w, win, spans[w], append(slices.Clone(prefixes), Lmax), out); err != nil {
				return nil, nil, err
			}
			continue
		}
		opts := nativeeval.Options{PathSteps: path, Prefixes: prefixes, RouteTrace: s.route.wants(w)}
		if w < cfg.FarWindows {
			opts.FarDistances = cfg.FarDistances
		}
		if probeT != nil {
			opts.ProbeQueries, opts.ProbeFar = probeQ, T
		}
		r, loss, err := s.forward(Lmax, w, " ("+spans[w].Doc+")", win, opts)
		if err != nil {
			return nil, nil, err
		}
		if err := s.route.add(w, r.Route); err != nil { // routemixing.go
			return nil, nil, fmt.Errorf("%s, length %d, window %d: %w", cfg.stageName(), Lmax, w, err)
		}
		for k, L := range append(slices.Clone(prefixes), Lmax) {
			sc := at(L)
			sc.losses = append(sc.losses, loss[:L])
			sc.windows = append(sc.windows, win)
			heads, steps := r.Heads, r.PathSteps
			if L < Lmax {
				if len(r.PrefixHeads) > 0 {
					heads = r.PrefixHeads[k]
				}
				if path {
					steps = r.PrefixPathSteps[k]
				}
			}
			if len(heads) > 0 {
				sc.diags = append(sc.diags, heads)
			}
			if path {
				if err := sc.steps.add(steps); err != nil {
					return nil, nil, fmt.Errorf("%s, length %d, window %d: %w", cfg.stageName(), L, w, err)
				}
			}
			if sc.probes != nil {
				sc.probes.add(splitProbe(r.Probe, cfg.probeQueries(L)))
			}
			out[L] = sc
		}
		if probeT != nil {
			probeT.add(splitProbe(r.Probe, cfg.probeQueries(T)))
		}
		s.tally(Lmax, fmt.Sprintf("L=%d window %d/%d (%s; prefixes score %v)", Lmax, w+1, len(long), spans[w].Doc, prefixes))
	}
	base, err := ds.EvalWindowsAvoiding(cfg.Seed, T, cfg.WindowsAt(T), spans)
	if err != nil {
		return nil, nil, fmt.Errorf("%s at length %d: %w", cfg.stageName(), T, err)
	}
	s.steps = nil
	if path {
		s.steps = &stepSums{}
	}
	losses, diags, err := s.score(T, base, true, "")
	if err != nil {
		return nil, nil, err
	}
	out[T] = lengthScores{losses: losses, diags: diags, steps: s.steps, probes: probeT}
	return out, spans, nil
}

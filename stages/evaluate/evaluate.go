package evaluate

import (
	"fmt"
	"math"

	"routebench/model/nativeeval"
	"routebench/modelspec/weights"
	"routebench/pipeline"
	"routebench/stages/tokenize/shards"
	"routebench/stats"
)

// FormatVersion is eval.json's format. 2 added EqualTokens windows
// (Config.WindowsAt), LengthResult.PrefixLoss and PrefixRatio; a result
// without the field is format 1 and reads as before (no prefix ratio).
// 3 added Result.PositionCurve and LengthResult.ContextGain (absent
// before).
//
// 4 added Result.Mechanism (the mechanism probe) and Result.Copy (the
// copy probe, copyprobe.go). 5 added the copy probe's control string
// (CopyGap.ControlLoss and ControlGain; R takes m of the gap's tokens at
// d >= m + 32, so that a format 4 probe's gap held other text). 6 made
// the copy probe's control context-matched (a control pass with each
// first copy replaced by a fresh string; R no longer in the probe
// sequence, whose gap is text again as in format 4).
const FormatVersion = 6

// Result is the content of eval.json.
type Result struct {
	// Format is FormatVersion when written; 0 (absent) for format 1.
	Format  int    `json:"format_version,omitempty"`
	Variant string `json:"variant"`
	Profile string `json:"profile"`
	// Corpus names the evaluation corpus (Config.Corpus); empty: the
	// training corpus's held-out split.
	Corpus string `json:"corpus,omitempty"`
	// The evaluation set: its source, tokens and documents.
	Source    string `json:"source"`
	Tokens    int64  `json:"tokens"`
	Documents int    `json:"documents"`
	Protocol  Config `json:"protocol"`
	// Lengths are the primary protocol's (ProtocolRandom) results.
	Lengths []LengthResult `json:"lengths"`
	// Protocols are the results of Config.Protocols, in that order.
	Protocols []ProtocolResult `json:"protocols,omitempty"`
	// Spans are where the longest length's windows lie in the held-out
	// split (DesignPrefixes; every shorter length past T scores their
	// prefixes).
	Spans []shards.Span `json:"spans,omitempty"`
	// PositionCurve is the primary protocol's loss by log-spaced position
	// bin at the longest length, per window (positions.go). Format 3.
	PositionCurve *PositionCurve `json:"position_curve,omitempty"`
	// Mechanism is the mechanism probe by length (mechanism.go). Format 4.
	Mechanism *Mechanism `json:"mechanism,omitempty"`
	// Copy is the zero-shot copy probe (copyprobe.go); absent under
	// RopeScaling and before format 4.
	Copy *CopyProbe `json:"copy,omitempty"`
	// Mixing is the route's mixing window per length (routemixing.go;
	// DesignPrefixes, rotation and PaTH variants). Format 4.
	Mixing *RouteMixing `json:"route_mixing,omitempty"`
}

// ProtocolResult is one further protocol's results (no far-mass
// diagnostic: that is the primary protocol's).
type ProtocolResult struct {
	Protocol    string          `json:"protocol"` // as in Config.Protocols
	Description string          `json:"description"`
	Lengths     []LengthResult  `json:"lengths"`           // ratios relative to its own first length
	Skipped     []SkippedLength `json:"skipped,omitempty"` // lengths it could not evaluate
}

// SkippedLength is a length a protocol could not evaluate, and why.
type SkippedLength struct {
	L      int    `json:"length"`
	Reason string `json:"reason"`
}

// LengthResult is one evaluation length.
type LengthResult struct {
	L          int `json:"length"`
	Multiplier int `json:"multiplier"`
	// Scored is how many positions at the end of each window were scored,
	// when fewer than L (a sliding-window protocol).
	Scored int            `json:"scored,omitempty"`
	PPL    stats.Interval `json:"ppl"`
	// Ratio is the paper's ratio PPL(L) / PPL(T): independent windows
	// at each length, a Welch t interval over the two sets of windows.
	Ratio stats.Interval `json:"ratio"`
	// WindowLoss is each window's mean loss over its scored positions.
	WindowLoss []float64 `json:"window_loss"`
	// PrefixLoss is each window's mean loss over its own first T
	// positions: windows of length T in their own right (a causal
	// model's loss at position i depends only on the tokens before it),
	// paired with WindowLoss. Format 2; empty in format 1.
	PrefixLoss []float64 `json:"prefix_loss,omitempty"`
	// PrefixRatio is the paired prefix ratio exp(mean over windows of
	// WindowLoss - PrefixLoss): PPL over the scored positions against PPL
	// over the same windows' first T, with the t interval over windows of
	// the per-window differences (stats.PairedRatioInterval). 1 at L = T. The v2
	// claims read it (docs/statistics.md says why). Format 2.
	PrefixRatio *stats.Interval `json:"prefix_ratio,omitempty"`
	Buckets     []Bucket        `json:"buckets,omitempty"` // not for sliding windows (only their last positions are scored)
	FarMass     []FarMass       `json:"far_mass"`
	Entropy     float64         `json:"entropy"` // mean attention entropy (nats), over layers, heads, queries
	// StepGaps are PaTH's mean Householder step per layer and head over
	// the length's first Config.Windows windows (stepgap.go; the windows
	// of format 1, so the extra EqualTokens windows do not multiply the
	// diagnostic's cost); primary protocol, PaTH only.
	StepGaps []StepGap `json:"step_gaps,omitempty"`
	// ContextGain is the same-token context gain (contextgain.go):
	// primary protocol, lengths from 2T. Format 3.
	ContextGain *ContextGain `json:"context_gain,omitempty"`
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

// scorer runs the model on windows and keeps count of the work done.
type scorer struct {
	rc          *pipeline.RunContext
	cfg         Config
	m           *nativeeval.Model
	done, total int64
	steps       *stepSums  // PaTH: the step sums of the current length's primary windows; nil otherwise
	probes      *probeSums // the current length's mechanism-probe rows (first Windows windows); nil: no probe
	route       *routeAcc  // the route's mixing window (routemixing.go); nil: not measured
}

// score returns each window's per-position losses (nats) and, on its first
// cfg.FarWindows windows when diag is set, the attention diagnostics.
func (s *scorer) score(L int, windows [][]int32, diag bool, what string) ([][]float64, [][]nativeeval.HeadStats, error) {
	var losses [][]float64
	var diags [][]nativeeval.HeadStats
	for w, win := range windows {
		opts := nativeeval.Options{RopeScaling: s.cfg.ropeScaling(L)}
		if diag && w < s.cfg.FarWindows {
			opts.FarDistances = s.cfg.FarDistances
		}
		opts.PathSteps = diag && s.steps != nil && w < s.cfg.Windows
		if diag && s.probes != nil && w < s.cfg.Windows {
			opts.ProbeQueries, opts.ProbeFar = s.cfg.probeQueries(L), s.cfg.Context
		}
		out, loss, err := s.forward(L, w, "", win, opts)
		if err != nil {
			return nil, nil, err
		}
		losses = append(losses, loss)
		if len(opts.ProbeQueries) > 0 {
			s.probes.add(out.Probe)
		}
		if len(out.Heads) > 0 {
			diags = append(diags, out.Heads)
		}
		if opts.PathSteps {
			if err := s.steps.add(out.PathSteps); err != nil {
				return nil, nil, fmt.Errorf("%s, length %d, window %d: %w", s.cfg.stageName(), L, w, err)
			}
		}
		s.tally(L, fmt.Sprintf("%sL=%d window %d/%d", what, L, w+1, len(windows)))
	}
	return losses, diags, nil
}

// forward is the one window pass every design runs: the model over
// window win's first L positions against the next tokens, returning the
// pass and its per-position losses (negated log-probabilities); where
// names the window's document in errors.
func (s *scorer) forward(L, w int, where string, win []int32, opts nativeeval.Options) (nativeeval.Result, []float64, error) {
	r, err := s.m.LogProbs(s.rc.Context, win[:L], win[1:L+1], opts)
	if err != nil {
		return r, nil, fmt.Errorf("%s, length %d, window %d%s: %w", s.cfg.stageName(), L, w, where, err)
	}
	loss := make([]float64, L)
	for i, lp := range r.LogProbs {
		loss[i] = -lp
	}
	return r, loss, nil
}

// tally counts L scored positions toward the stage's progress.
func (s *scorer) tally(L int, msg string) {
	s.done += int64(L)
	s.rc.Progress(s.done, s.total, msg)
}

// lengthResult summarizes one protocol's windows at one length; base holds
// the window losses of the protocol's first length (set when nil).
func (s *scorer) lengthResult(p Protocol, losses [][]float64, L, mult int, base *[]float64) (LengthResult, error) {
	lr := LengthResult{L: L, Multiplier: mult}
	if k := p.scored(L); k < L {
		lr.Scored = k
	}
	T := s.cfg.Context
	for w, loss := range losses {
		mean := p.windowLoss(loss)
		if math.IsNaN(mean) || math.IsInf(mean, 0) {
			return lr, fmt.Errorf("%s, length %d, window %d: loss is %v", s.cfg.stageName(), L, w, mean)
		}
		lr.WindowLoss = append(lr.WindowLoss, mean)
		lr.PrefixLoss = append(lr.PrefixLoss, stats.Mean(loss[:min(T, len(loss))]))
	}
	lr.PPL = stats.PPLInterval(lr.WindowLoss)
	if *base == nil {
		*base = lr.WindowLoss
	}
	lr.Ratio = stats.RatioInterval(lr.WindowLoss, *base)
	pr, err := stats.PairedRatioInterval(lr.WindowLoss, lr.PrefixLoss)
	if err != nil {
		return lr, fmt.Errorf("%s, length %d: %w", s.cfg.stageName(), L, err)
	}
	lr.PrefixRatio = &pr
	if p.Stride == 0 {
		perPos := make([][]float32, len(losses))
		for w, loss := range losses {
			perPos[w] = make([]float32, len(loss))
			for i, v := range loss {
				perPos[w][i] = float32(v)
			}
		}
		lr.Buckets = PositionBuckets(perPos, s.cfg.Context)
	}
	return lr, nil
}

func evaluate(rc *pipeline.RunContext, cfg Config, set *weights.Set, ds *shards.Dataset) (*Result, int64, error) {
	m, err := nativeeval.Load(set)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", cfg.stageName(), err)
	}
	protos, err := parseProtocols(cfg.Protocols)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", cfg.stageName(), err)
	}
	passes := int64(1)
	for _, p := range protos {
		if p.InDocuments {
			passes = 2 // one more forward pass per window, shared by the in-document protocols
			break
		}
	}
	s := &scorer{rc: rc, cfg: cfg, m: m}
	var every int64 // tokens in every length's own windows
	for _, mult := range cfg.Multipliers {
		every += int64(cfg.WindowsAt(mult*cfg.Context) * mult * cfg.Context)
	}
	s.total = passes * every
	if cfg.Design == DesignPrefixes {
		s.total = (passes-1)*every + int64(cfg.WindowsAt(cfg.Context)*cfg.Context) + int64(cfg.Windows)*cfg.prefixPassTokens()
	}
	s.total += cfg.gainTokens() + cfg.copyTokens()
	info := ds.Info()
	res := &Result{Format: FormatVersion, Variant: cfg.Variant, Profile: cfg.Profile, Corpus: cfg.Corpus, Protocol: cfg, Source: info.Source,
		Tokens: info.Splits[shards.SplitHeldOut].Tokens, Documents: info.Splits[shards.SplitHeldOut].Documents}
	for _, p := range protos {
		res.Protocols = append(res.Protocols, ProtocolResult{Protocol: p.Name, Description: p.Describe()})
	}
	var pre map[int]lengthScores // DesignPrefixes: every length's scores, from one pass
	if cfg.Design == DesignPrefixes {
		s.route = newRouteAcc(cfg, set.Arch) // routemixing.go
		s.total += s.route.controlTokens()
		if pre, res.Spans, err = s.scorePrefixes(ds, set.Arch.Householder); err != nil {
			return nil, s.done, err
		}
		res.Mixing = s.route.result()
		if err := s.repeatedControl(res.Mixing, ds.Info().Tokenizer); err != nil { // routecontrol.go
			return nil, s.done, err
		}
	}
	primary := Protocol{Name: ProtocolRandom}
	var base []float64
	bases := make([][]float64, len(protos))
	for _, mult := range cfg.Multipliers {
		L := mult * cfg.Context
		sc, ok := pre[L]
		if !ok {
			windows, _, _, err := inStream.windows(ds, cfg.Seed, L, cfg.WindowsAt(L))
			if err != nil {
				return nil, s.done, fmt.Errorf("%s at length %d: %w", cfg.stageName(), L, err)
			}
			if set.Arch.Householder {
				s.steps = &stepSums{}
			}
			s.probes = cfg.newProbeSums()
			losses, diags, err := s.score(L, windows, true, "")
			if err != nil {
				return nil, s.done, err
			}
			sc = lengthScores{losses: losses, diags: diags, steps: s.steps, windows: windows, probes: s.probes}
			s.probes = nil
		}
		losses := sc.losses
		lr, err := s.lengthResult(primary, losses, L, mult, &base)
		if err != nil {
			return nil, s.done, err
		}
		lr.FarMass, lr.Entropy = summarizeDiagnostics(sc.diags, cfg.FarDistances)
		if sc.steps != nil {
			lr.StepGaps = sc.steps.gaps()
		}
		if sc.probes != nil {
			ml, err := sc.probes.summarize(L, cfg.Context)
			if err != nil {
				return nil, s.done, fmt.Errorf("%s: %w", cfg.stageName(), err)
			}
			if res.Mechanism == nil {
				res.Mechanism = &Mechanism{Queries: cfg.ProbeQueries, Far: cfg.Context}
			}
			res.Mechanism.Lengths = append(res.Mechanism.Lengths, ml)
		}
		if lr.ContextGain, err = s.contextGain(L, sc); err != nil {
			return nil, s.done, err
		}
		if L == cfg.longest() {
			if res.PositionCurve, err = positionCurve(losses, L); err != nil {
				return nil, s.done, fmt.Errorf("%s: %w", cfg.stageName(), err)
			}
		}
		res.Lengths = append(res.Lengths, lr)
		rc.Logf("L=%d: %d windows, PPL %s, ratio %s, prefix ratio %s", L, len(losses), lr.PPL, lr.Ratio, lr.PrefixRatio)

		var docLosses [][]float64 // the in-document windows' losses, once scored
		var docSkip string
		for k, p := range protos {
			pl := losses
			if p.InDocuments {
				if docLosses == nil && docSkip == "" {
					ws, ok, why, err := inDocuments.windows(ds, cfg.Seed, L, cfg.WindowsAt(L))
					if err != nil {
						return nil, s.done, fmt.Errorf("%s at length %d: %w", cfg.stageName(), L, err)
					}
					if !ok {
						docSkip = why
						s.done += int64(cfg.WindowsAt(L) * L) // the pass it will not make
					} else if docLosses, _, err = s.score(L, ws, false, "in documents: "); err != nil {
						return nil, s.done, err
					}
				}
				if docSkip != "" {
					res.Protocols[k].Skipped = append(res.Protocols[k].Skipped, SkippedLength{L: L, Reason: docSkip})
					continue
				}
				pl = docLosses
			}
			plr, err := s.lengthResult(p, pl, L, mult, &bases[k])
			if err != nil {
				return nil, s.done, err
			}
			res.Protocols[k].Lengths = append(res.Protocols[k].Lengths, plr)
			rc.Logf("L=%d %s: PPL %s, ratio %s", L, p.Name, plr.PPL, plr.Ratio)
		}
	}
	if cfg.RopeScaling == "" {
		if res.Copy, err = s.copyProbe(ds); err != nil {
			return nil, s.done, err
		}
	}
	return res, s.done, nil
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

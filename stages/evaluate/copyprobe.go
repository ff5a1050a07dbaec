package evaluate

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"routebench/internal/seeds"
	"routebench/model/nativeeval"
	"routebench/stages/tokenize/shards"
	"routebench/stats"
)

// The zero-shot copy probe (issue 39): can the model still retrieve
// content from d tokens back? A probe is a random string S of m tokens,
// then a gap of d tokens of held-out text, then S again. No model has
// seen S, so its first copy is unpredictable; a model that finds the
// first copy from the second predicts the second copy far better. The
// first token of a copy is unpredictable in every pass (nothing announces
// that a copy starts), so every mean below is over a copy's tokens 2..m.
//
// The raw gain is the first copy's mean loss minus the second's. It
// mixes retrieval with two effects that are not retrieval: the copies
// sit at different positions (d + m apart; a model past its training
// length that predicts near uniformly scores random tokens better by
// itself), and the second copy reads after a random string, the first
// after text (a recent random string changes the loss on the next one by
// itself: format 5's control string, placed beside the second copy
// after text, showed that shift in every variant, nope included).
//
// The control (format 6) is therefore context-matched: a second pass
// over the same sequence with each probe's first copy replaced by a
// control string R of m fresh tokens (drawn from a stream of its own).
// In that pass the string at the second copy's place is S seen for the
// first time, at the same position, after the same text, with a random
// string the same d tokens back; only the match is missing. The
// controlled gain, the headline, is the second copy's mean loss in the
// control pass minus its mean loss in the probe pass: retrieval alone.
// The price is a second forward pass per gap.
//
// Gaps: 16, 64, 256 and every length m x T of the profile, the longest
// replaced by L_max - 2m - 1 so that its probe fits in the longest
// length L_max (no probe at all when not even a gap of 16 fits). The
// probes of one gap are packed one after another into one sequence (one
// forward pass of at most L_max inputs, and its control pass), each with
// its own strings: 8 per gap up to L_max/64, then L_max/(8d) (halving as
// d doubles, so that each longer gap costs about L_max/8 tokens), 1 at
// the longest. One sequence per gap, not every gap in one sequence: a
// probe's position in its sequence (how much context precedes it) is
// then the same order as its gap, so that a short gap is not measured
// only past positions a model cannot extrapolate to, and attention's
// quadratic cost stays on the long gaps alone. The cpu profile (T = 512,
// L_max = 65,536) scores 2 x 157,364 tokens in 22 passes, 2 x 65,534 of
// them at the longest gap: about 2.6 passes of the longest length.

// CopyControlFormat is the first eval.json format whose ControlGain is
// the context-matched control's; format 5's was a string in the gap,
// confounded by its layout, and readers leave it out.
const CopyControlFormat = 6

// ContextMatchedGains is the gap's controlled gains when the result's
// format has the context-matched control; nil otherwise.
func (g CopyGap) ContextMatchedGains(format int) []float64 {
	if format < CopyControlFormat {
		return nil
	}
	return g.ControlGain
}

// CopyProbeLen is m, the random string's length in tokens.
const CopyProbeLen = 32

// copyBroken holds the mutations the tests use to show that their checks
// can fail: "offset" shifts the second copy's scored span one token
// earlier, "control" the control pass's one token earlier, "reuse" makes
// the control string S itself (the control pass is then the probe pass),
// and "text" gives the control pass other text in its gap.
var copyBroken string

// CopyProbe is the copy probe's result (Result.Copy, format 4; the
// context-matched control from format 6).
type CopyProbe struct {
	M int `json:"m"` // the string's length; each copy's mean loss is over its tokens 2..m
	// Tokens is the probe's cost: the inputs of its forward passes, the
	// control passes included.
	Tokens int64     `json:"tokens"`
	Gaps   []CopyGap `json:"gaps"`
}

// CopyGap is one gap's probes.
type CopyGap struct {
	D      int `json:"gap"`    // the gap d, the held-out text between the copies
	Probes int `json:"probes"` // how many probes (one pass and its control pass, packed)
	// Gain is each probe's raw copy gain: FirstLoss - SecondLoss (nats).
	Gain     []float64 `json:"gain"`
	MeanGain float64   `json:"mean_gain"`
	// ControlGain is each probe's controlled gain: ControlLoss -
	// SecondLoss (nats), the second copy's loss when its first copy was
	// another string (the control pass) minus its loss when it was S.
	// Format 6 (format 5's ControlGain was another control, a string
	// in the gap; empty before format 5).
	ControlGain     []float64 `json:"control_gain,omitempty"`
	MeanControlGain float64   `json:"mean_control_gain"`
	// FirstLoss and SecondLoss are each probe's mean loss over the
	// first and the second copy's tokens 2..m; ControlLoss over the
	// second copy's tokens 2..m in the control pass.
	FirstLoss   []float64 `json:"first_loss"`
	SecondLoss  []float64 `json:"second_loss"`
	ControlLoss []float64 `json:"control_loss,omitempty"`
}

// copyGapPlan is one gap and its probe count.
type copyGapPlan struct{ d, probes int }

// copyProbeTokens is one probe's tokens at the gap d: the two copies
// and the gap.
func copyProbeTokens(d, m int) int { return 2*m + d }

// copyPlan lists the gaps and their probe counts for the string length m;
// nil when not even a gap of 16 fits (L_max < 2m + 17).
func (c Config) copyPlan(m int) []copyGapPlan {
	if !c.CopyProbe || c.RopeScaling != "" || len(c.Multipliers) == 0 {
		return nil // the inference-time RoPE extensions skip the probe
	}
	Lmax := c.longest()
	// The longest probe's tokens are L_max - 1 (L_max - 2 inputs), as
	// in every format.
	longestGap := Lmax - 1 - 2*m
	if longestGap < 16 {
		return nil
	}
	ds := []int{16, 64, 256}
	for _, mult := range c.Multipliers {
		ds = append(ds, mult*c.Context)
	}
	var plan []copyGapPlan
	for _, d := range ds {
		if d >= Lmax {
			d = longestGap
		}
		if d > longestGap || slices.ContainsFunc(plan, func(p copyGapPlan) bool { return p.d == d }) {
			continue
		}
		n := 8
		if d > Lmax/64 {
			n = max(1, min(8, Lmax/(8*d)))
		}
		n = max(1, min(n, (Lmax+1)/copyProbeTokens(d, m))) // the packed sequence's inputs stay within L_max
		if d == longestGap {
			n = 1
		}
		plan = append(plan, copyGapPlan{d: d, probes: n})
	}
	slices.SortFunc(plan, func(a, b copyGapPlan) int { return a.d - b.d })
	return plan
}

// copyTokens is the probe's work in tokens: every pass's inputs, the
// control passes included.
func (c Config) copyTokens() int64 {
	var n int64
	for _, L := range c.CopyPassLengths() {
		n += int64(L)
	}
	return n
}

// CopyPassLengths are the copy probe's forward passes, two per gap (the
// probe's and its control's), by their input lengths (the cost model
// prices them).
func (c Config) CopyPassLengths() []int {
	var out []int
	for _, p := range c.copyPlan(CopyProbeLen) {
		n := p.probes*copyProbeTokens(p.d, CopyProbeLen) - 1
		out = append(out, n, n)
	}
	return out
}

// copySeq is one gap's packed sequence, the probes one after another,
// and its control sequence (each first copy replaced by its R); a pass
// reads tokens[:len-1] and predicts tokens[1:].
type copySeq struct {
	d       int
	tokens  []int32
	control []int32
	probes  []copyProbeAt
}

// copyProbeAt is one probe in its sequence: its first copy (R in the
// control sequence) starts at tokens[start], its second at start+m+d;
// the gap between them is held-out text, read from offset textAt of the
// split in order.
type copyProbeAt struct {
	index  int // over all gaps: the strings' seed
	start  int
	textAt int64
}

// copyLayout builds every gap's sequence and its control sequence: strings uniform over the
// vocabulary but the end-of-document id (an end of document inside the
// string would tell the model that what follows is another text), S drawn
// from the stream (seed, seeds.CopyStrings, the probe's index over all
// gaps) and R from (seed, seeds.CopyControl, the same index), so that the
// two never share a draw; the text reads one probe after another from a
// seeded offset of the held-out split, so that it is distinct text while
// the split holds all of it (the cpu profile's probes read 154,175), and
// wrapping around its end otherwise. A control sequence is its probe
// sequence with each first copy S replaced by that probe's R.
func copyLayout(ds *shards.Dataset, cfg Config, vocab, m int) ([]copySeq, error) {
	plan := cfg.copyPlan(m)
	if len(plan) == 0 {
		return nil, nil
	}
	held, err := ds.Tokens(shards.SplitHeldOut)
	if err != nil {
		return nil, err
	}
	n := held.Len()
	if n == 0 || vocab < 2 {
		return nil, fmt.Errorf("copy probe: %d held-out tokens and a vocabulary of %d; a probe needs text and a vocabulary of at least 2", n, vocab)
	}
	eot, draw := held.EOT(), vocab
	if eot >= 0 && int(eot) < vocab {
		draw-- // skip the end-of-document id
	}
	str := func(p seeds.Purpose, index int) []int32 {
		r := seeds.Rand(cfg.Seed, p, uint64(index))
		s := make([]int32, m)
		for i := range s {
			x := int32(r.IntN(draw))
			if draw < vocab && x >= eot {
				x++
			}
			s[i] = x
		}
		return s
	}
	at := int64(seeds.Rand(cfg.Seed, seeds.CopyText).Uint64N(uint64(n)))
	index := 0
	var seqs []copySeq
	for _, p := range plan {
		per := copyProbeTokens(p.d, m)
		seq := copySeq{d: p.d, tokens: make([]int32, 0, p.probes*per), control: make([]int32, 0, p.probes*per)}
		for range p.probes {
			s, r := str(seeds.CopyStrings, index), str(seeds.CopyControl, index)
			if copyBroken == "reuse" {
				r = s
			}
			text := make([]int32, p.d)
			if err := readCyclic(held, text, at); err != nil {
				return nil, fmt.Errorf("copy probe, gap %d: %w", p.d, err)
			}
			ctlText := text
			if copyBroken == "text" {
				ctlText = slices.Clone(text)
				ctlText[0], ctlText[len(ctlText)-1] = ctlText[len(ctlText)-1], ctlText[0]+1
			}
			seq.probes = append(seq.probes, copyProbeAt{index: index, start: len(seq.tokens), textAt: at})
			seq.tokens = slices.Concat(seq.tokens, s, text, s)      // S, the gap's text, S
			seq.control = slices.Concat(seq.control, r, ctlText, s) // R, the same text, S
			at = (at + int64(len(text))) % n
			index++
		}
		seqs = append(seqs, seq)
	}
	return seqs, nil
}

// readCyclic fills dst from the split starting at off, going on from its
// start past its end.
func readCyclic(t *shards.Tokens, dst []int32, off int64) error {
	for len(dst) > 0 {
		k := min(int64(len(dst)), t.Len()-off)
		if err := t.Read(dst[:k], off); err != nil {
			return err
		}
		dst, off = dst[k:], 0
	}
	return nil
}

// lossFunc scores a sequence: the loss (nats) of predicting targets[i]
// after tokens[:i+1]. The model's (modelLosses), or a test's.
type lossFunc func(ctx context.Context, tokens, targets []int32) ([]float64, error)

func modelLosses(m *nativeeval.Model) lossFunc {
	return func(ctx context.Context, tokens, targets []int32) ([]float64, error) {
		out, err := m.LogProbs(ctx, tokens, targets, nativeeval.Options{})
		if err != nil {
			return nil, err
		}
		loss := make([]float64, len(out.LogProbs))
		for i, lp := range out.LogProbs {
			loss[i] = -lp
		}
		return loss, nil
	}
}

// copyGains scores each sequence and its control sequence and computes
// their probes' raw and controlled gains; done is called with each
// pass's input tokens.
func copyGains(ctx context.Context, seqs []copySeq, m int, score lossFunc, done func(tokens int, d int)) (*CopyProbe, error) {
	cp := &CopyProbe{M: m}
	for _, seq := range seqs {
		N := len(seq.tokens)
		if len(seq.control) != N {
			return nil, fmt.Errorf("copy probe, gap %d: a control sequence of %d tokens for a probe sequence of %d", seq.d, len(seq.control), N)
		}
		var losses [2][]float64 // the probe pass's, the control pass's
		for k, toks := range [2][]int32{seq.tokens, seq.control} {
			loss, err := score(ctx, toks[:N-1], toks[1:])
			if err != nil {
				return nil, fmt.Errorf("copy probe, gap %d (%s pass): %w", seq.d, [2]string{"probe", "control"}[k], err)
			}
			if len(loss) != N-1 {
				return nil, fmt.Errorf("copy probe, gap %d: %d losses for %d inputs", seq.d, len(loss), N-1)
			}
			losses[k] = loss
			cp.Tokens += int64(N - 1)
			if done != nil {
				done(N-1, seq.d)
			}
		}
		// copyLoss is the mean loss over the tokens 2..m of the copy
		// starting at c: tokens c+1..c+m-1, predicted at c..c+m-2.
		copyLoss := func(loss []float64, c int) float64 {
			return stats.Mean(loss[c : c+m-1])
		}
		g := CopyGap{D: seq.d, Probes: len(seq.probes)}
		for _, p := range seq.probes {
			second := p.start + m + seq.d
			if copyBroken == "offset" {
				second--
			}
			control := second
			if copyBroken == "control" {
				control--
			}
			first, sec, ctl := copyLoss(losses[0], p.start), copyLoss(losses[0], second), copyLoss(losses[1], control)
			if x := first + sec + ctl; math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("copy probe, gap %d, probe %d: losses %v (first copy), %v (second) and %v (second, control pass); a model that gives a non-finite loss cannot be probed", seq.d, p.index, first, sec, ctl)
			}
			g.FirstLoss = append(g.FirstLoss, first)
			g.SecondLoss = append(g.SecondLoss, sec)
			g.ControlLoss = append(g.ControlLoss, ctl)
			g.Gain = append(g.Gain, first-sec)
			g.ControlGain = append(g.ControlGain, ctl-sec)
		}
		g.MeanGain = stats.Mean(g.Gain)
		g.MeanControlGain = stats.Mean(g.ControlGain)
		cp.Gaps = append(cp.Gaps, g)
	}
	return cp, nil
}

// copyProbe runs the probe on the scorer's model; nil when no gap fits
// or under an inference-time RoPE extension.
func (s *scorer) copyProbe(ds *shards.Dataset) (*CopyProbe, error) {
	seqs, err := copyLayout(ds, s.cfg, s.m.Arch.Vocab, CopyProbeLen)
	if err != nil || len(seqs) == 0 {
		if err != nil {
			err = fmt.Errorf("%s: %w", s.cfg.stageName(), err)
		}
		return nil, err
	}
	start := time.Now()
	cp, err := copyGains(s.rc.Context, seqs, CopyProbeLen, modelLosses(s.m), func(tokens, d int) {
		s.tally(tokens, fmt.Sprintf("copy probe d=%d", d))
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.cfg.stageName(), err)
	}
	for _, g := range cp.Gaps {
		s.rc.Logf("copy probe d=%d: %d probes, mean controlled gain %.4f nats, raw %.4f (second copy %.4f, in the control pass %.4f; first copy %.4f)", g.D, g.Probes, g.MeanControlGain, g.MeanGain, stats.Mean(g.SecondLoss), stats.Mean(g.ControlLoss), stats.Mean(g.FirstLoss))
	}
	s.rc.Logf("copy probe: %d passes (a probe pass and a control pass per gap), %d tokens in %.3f s", 2*len(seqs), cp.Tokens, time.Since(start).Seconds())
	return cp, nil
}

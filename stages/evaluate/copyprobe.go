package evaluate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"routebench/model/nativeeval"
	"routebench/stages/tokenize/shards"
	"routebench/stats"
)

// The zero-shot copy probe (issue 39): can the model still retrieve
// content from d tokens back? A probe is a random string S of m tokens,
// then a gap of d tokens (held-out text, and the control string below),
// then S again. No model has
// seen S, so its first copy is unpredictable; a model that finds the
// first copy from the second predicts the second copy far better. The
// raw copy gain of a probe is the mean loss (nats) over the first copy's
// tokens 2..m minus the mean loss over the second copy's tokens 2..m:
// the first token of either copy is unpredictable in both (nothing
// announces that a copy starts), so it is left out of both means. A
// large gain: the model retrieves S from distance ~d; 0: no retrieval.
//
// The control (format 5). The two copies sit at different positions of
// their sequence (about d + m apart), and a model's loss depends on the
// position by itself: a RoPE model past its training length predicts
// near uniformly, which lowers its loss on random tokens without any
// retrieval, so at long gaps the raw gain mixes the two. Each probe
// therefore also holds a control string R of m tokens, drawn like S from
// a stream of its own and seen nowhere else, placed where it shares the
// second copy's position and kind of context: inside the gap, ending
// copyControlLead (16) tokens of text before the second copy, when the
// gap has room for it and for as much text before it (d >= m + 32);
// otherwise (the short gaps, where R still starts 2m + 16 + d < 3m + 48
// tokens before the second copy: under 144 for m = 32) just before the
// first copy, copyControlLead tokens of text between them. d keeps its
// meaning: the tokens between the end of the first copy and the start of
// the second, R and the text around it included. The controlled gain is
// the mean loss over R's tokens 2..m minus the second copy's: a never
// seen string against a seen one at nearly the same position, so that
// the position's own effect cancels. The same pass scores R: the control
// costs no forward pass, only its m tokens (and 16 of text) at the short
// gaps.
//
// Gaps: 16, 64, 256 and every length m x T of the profile, the longest
// replaced by L_max - 2m - 1 so that its probe fits in the longest length
// L_max with R inside its gap (the formula the probe had before the
// control; no probe at all for L_max < 3m + 33, where neither that gap
// holds R nor a gap of 16 fits with R before its first copy). The probes
// of one gap are packed one after another into one sequence (one forward
// pass of at most L_max inputs), each with its own strings: 8 per gap up
// to L_max/64, then L_max/(8d) (halving as d doubles, so that each longer
// gap costs about L_max/8 tokens), 1 at the longest. One sequence per
// gap, not every gap in one sequence: a probe's position in its sequence
// (how much context precedes it) is then the same order as its gap, so
// that a short gap is not measured only past positions a model cannot
// extrapolate to, and attention's quadratic cost stays on the long gaps
// alone. The cpu profile (T = 512, L_max = 65,536) scores 157,748 tokens
// in 11 passes, 65,534 of them in the longest: 16.5 s for random-qk on
// the shared 2-core host, 1.33 times its one pass of 65,536 (12.4 s,
// measured beside it before the control, which adds 384 tokens at d =
// 16 and none elsewhere).

// CopyProbeLen is m, the random string's length in tokens.
const CopyProbeLen = 32

// copyControlLead is the text between the control string's end and the
// copy it sits before (the second copy, or the first at short gaps).
const copyControlLead = 16

// copyBroken holds the mutations the tests use to show that their checks
// can fail: "offset" shifts the second copy's scored span one token
// earlier, "control" the control string's one token later, and "reuse"
// makes the control string a third copy of S.
var copyBroken string

// CopyProbe is the copy probe's result (Result.Copy, format 4).
type CopyProbe struct {
	M int `json:"m"` // the string's length; each copy's mean loss is over its tokens 2..m
	// Tokens is the probe's cost: the inputs of its forward passes.
	Tokens int64     `json:"tokens"`
	Gaps   []CopyGap `json:"gaps"`
}

// CopyGap is one gap's probes.
type CopyGap struct {
	D      int `json:"gap"`    // the gap d, tokens between the copies (held-out text, and R when it fits)
	Probes int `json:"probes"` // how many probes (one pass, packed)
	// Gain is each probe's raw copy gain: FirstLoss - SecondLoss (nats).
	Gain     []float64 `json:"gain"`
	MeanGain float64   `json:"mean_gain"`
	// ControlGain is each probe's controlled gain: ControlLoss -
	// SecondLoss (nats), the gain against a never seen string at nearly
	// the second copy's position. Format 5; empty before.
	ControlGain     []float64 `json:"control_gain,omitempty"`
	MeanControlGain float64   `json:"mean_control_gain"`
	// FirstLoss, SecondLoss and ControlLoss are each probe's mean loss
	// over the first copy's, the second copy's and the control string's
	// tokens 2..m.
	FirstLoss   []float64 `json:"first_loss"`
	SecondLoss  []float64 `json:"second_loss"`
	ControlLoss []float64 `json:"control_loss,omitempty"`
}

// copyGapPlan is one gap and its probe count.
type copyGapPlan struct{ d, probes int }

// controlInGap says whether the gap d holds the control string: room for
// R, the copyControlLead tokens of text after it, and as many before it
// (so that R, like the second copy, reads after text).
func controlInGap(d, m int) bool { return d >= m+2*copyControlLead }

// copyProbeTokens is one probe's tokens at the gap d: the two copies and
// the gap, plus R and its lead of text when R precedes the first copy.
func copyProbeTokens(d, m int) int {
	if controlInGap(d, m) {
		return 2*m + d
	}
	return 3*m + copyControlLead + d
}

// copyPlan lists the gaps and their probe counts for the string length m;
// nil when no probe with its control fits (L_max < 3m + 33).
func (c Config) copyPlan(m int) []copyGapPlan {
	if !c.CopyProbe || c.RopeScaling != "" || len(c.Multipliers) == 0 {
		return nil // the inference-time RoPE extensions skip the probe
	}
	Lmax := c.longest()
	// The longest probe's tokens are L_max - 1 (L_max - 2 inputs), as
	// before the control, which lies inside its gap: a gap too short to
	// hold R (L_max < 3m + 33) leaves no probe at all, since a gap of 16
	// with R before the first copy needs as many tokens.
	longestGap := Lmax - 1 - 2*m
	if !controlInGap(longestGap, m) {
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

// copyTokens is the probe's work in tokens: every pass's inputs.
func (c Config) copyTokens() int64 {
	var n int64
	for _, L := range c.CopyPassLengths() {
		n += int64(L)
	}
	return n
}

// CopyPassLengths are the copy probe's forward passes, one per gap, by
// their input lengths (the cost model prices them).
func (c Config) CopyPassLengths() []int {
	var out []int
	for _, p := range c.copyPlan(CopyProbeLen) {
		out = append(out, p.probes*copyProbeTokens(p.d, CopyProbeLen)-1)
	}
	return out
}

// copySeq is one gap's packed sequence: the probes one after another;
// the pass reads tokens[:len-1] and predicts tokens[1:].
type copySeq struct {
	d      int
	tokens []int32
	probes []copyProbeAt
}

// copyProbeAt is one probe in its sequence: its tokens begin at
// tokens[begin]; its first copy starts at tokens[start], its second at
// start+m+d, its control string at tokens[control] (begin, before the
// first copy, at the short gaps; else start+d-copyControlLead, inside the
// gap); the rest is held-out text, read from offset textAt of the split
// in order.
type copyProbeAt struct {
	index   int // over all gaps: the strings' seed
	begin   int
	start   int
	control int
	textAt  int64
}

// copyLayout builds every gap's sequence: strings uniform over the
// vocabulary but the end-of-document id (an end of document inside the
// string would tell the model that what follows is another text), S drawn
// from a PCG seeded by (seed ^ "copy", the probe's index over all gaps)
// and R from one seeded by (seed ^ "ctrl", the same index), so that the
// two never share a draw; the text reads one probe after another from a
// seeded offset of the held-out split, so that it is distinct text while
// the split holds all of it (the cpu profile's probes need 153K tokens),
// and wrapping around its end otherwise.
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
	const (
		stream        = 0x636f7079 // "copy": no other draw uses these seeds
		controlStream = 0x6374726c // "ctrl": R's, distinct from S's
	)
	str := func(seed uint64, index int) []int32 {
		r := rand.New(rand.NewPCG(seed, uint64(index)))
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
	at := int64(rand.New(rand.NewPCG(cfg.Seed, stream)).Uint64N(uint64(n)))
	index := 0
	var seqs []copySeq
	for _, p := range plan {
		per := copyProbeTokens(p.d, m)
		seq := copySeq{d: p.d, tokens: make([]int32, 0, p.probes*per)}
		for range p.probes {
			s, r := str(cfg.Seed^stream, index), str(cfg.Seed^controlStream, index)
			if copyBroken == "reuse" {
				r = s
			}
			text := make([]int32, per-3*m)
			if err := readCyclic(held, text, at); err != nil {
				return nil, fmt.Errorf("copy probe, gap %d: %w", p.d, err)
			}
			pr := copyProbeAt{index: index, begin: len(seq.tokens), textAt: at}
			if controlInGap(p.d, m) {
				// S, text, R, copyControlLead of text, S
				k := len(text) - copyControlLead
				pr.start, pr.control = pr.begin, pr.begin+p.d-copyControlLead
				seq.tokens = slices.Concat(seq.tokens, s, text[:k], r, text[k:], s)
			} else {
				// R, copyControlLead of text, S, the gap's text, S
				pr.control, pr.start = pr.begin, pr.begin+m+copyControlLead
				seq.tokens = slices.Concat(seq.tokens, r, text[:copyControlLead], s, text[copyControlLead:], s)
			}
			seq.probes = append(seq.probes, pr)
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

// copyGains scores each sequence once and computes its probes' raw and
// controlled gains; done is called with each pass's input tokens.
func copyGains(ctx context.Context, seqs []copySeq, m int, score lossFunc, done func(tokens int, d int)) (*CopyProbe, error) {
	cp := &CopyProbe{M: m}
	for _, seq := range seqs {
		N := len(seq.tokens)
		loss, err := score(ctx, seq.tokens[:N-1], seq.tokens[1:])
		if err != nil {
			return nil, fmt.Errorf("copy probe, gap %d: %w", seq.d, err)
		}
		if len(loss) != N-1 {
			return nil, fmt.Errorf("copy probe, gap %d: %d losses for %d inputs", seq.d, len(loss), N-1)
		}
		// copyLoss is the mean loss over the tokens 2..m of the copy
		// starting at c: tokens c+1..c+m-1, predicted at c..c+m-2.
		copyLoss := func(c int) float64 {
			return stats.Mean(loss[c : c+m-1])
		}
		g := CopyGap{D: seq.d, Probes: len(seq.probes)}
		for _, p := range seq.probes {
			second := p.start + m + seq.d
			if copyBroken == "offset" {
				second--
			}
			control := p.control
			if copyBroken == "control" {
				control++
			}
			first, sec, ctl := copyLoss(p.start), copyLoss(second), copyLoss(control)
			if x := first + sec + ctl; math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("copy probe, gap %d, probe %d: losses %v (first copy), %v (second) and %v (control); a model that gives a non-finite loss cannot be probed", seq.d, p.index, first, sec, ctl)
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
		cp.Tokens += int64(N - 1)
		if done != nil {
			done(N-1, seq.d)
		}
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
		s.done += int64(tokens)
		s.rc.Progress(s.done, s.total, fmt.Sprintf("copy probe d=%d", d))
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.cfg.stageName(), err)
	}
	for _, g := range cp.Gaps {
		s.rc.Logf("copy probe d=%d: %d probes, mean controlled gain %.4f nats, raw %.4f (control %.4f, first copy %.4f, second %.4f)", g.D, g.Probes, g.MeanControlGain, g.MeanGain, stats.Mean(g.ControlLoss), stats.Mean(g.FirstLoss), stats.Mean(g.SecondLoss))
	}
	s.rc.Logf("copy probe: %d passes, %d tokens in %.3f s", len(seqs), cp.Tokens, time.Since(start).Seconds())
	return cp, nil
}

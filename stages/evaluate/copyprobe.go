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
// then d tokens of held-out text (the gap), then S again. No model has
// seen S, so its first copy is unpredictable; a model that finds the
// first copy from the second predicts the second copy far better. The
// copy gain of a probe is the mean loss (nats) over the first copy's
// tokens 2..m minus the mean loss over the second copy's tokens 2..m:
// the first token of either copy is unpredictable in both (nothing
// announces that a copy starts), so it is left out of both means. A
// large gain: the model retrieves S from distance ~d; 0: no retrieval.
//
// Gaps: 16, 64, 256 and every length m x T of the profile, the longest
// replaced by L_max - 2m - 1 so that its probe fits in the longest
// length L_max. The probes of one gap are packed one after another into
// one sequence (one forward pass of at most L_max inputs), each with its
// own string: 8 per gap up to L_max/64, then L_max/(8d) (halving as d
// doubles, so that each longer gap costs about L_max/8 tokens), 1 at the
// longest. One sequence per gap, not every gap in one sequence: a probe's
// position in its sequence (how much context precedes it) is then the
// same order as its gap, so that a short gap is not measured only past
// positions a model cannot extrapolate to, and attention's quadratic cost
// stays on the long gaps alone. The cpu profile (T = 512, L_max = 65,536)
// scores 157,364 tokens in 11 passes, 65,534 of them in the longest:
// 16.5 s for random-qk on the shared 2-core host, 1.33 times its one pass
// of 65,536 (12.4 s, measured beside it).

// CopyProbeLen is m, the random string's length in tokens.
const CopyProbeLen = 32

// copyBroken, when "offset", shifts the second copy's scored span one
// token earlier (a mutation the tests use to show their reference
// comparison can fail).
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
	D      int `json:"gap"`    // the gap d, tokens of held-out text between the copies
	Probes int `json:"probes"` // how many probes (one pass, packed)
	// Gain is each probe's copy gain: FirstLoss - SecondLoss (nats).
	Gain     []float64 `json:"gain"`
	MeanGain float64   `json:"mean_gain"`
	// FirstLoss and SecondLoss are each probe's mean loss over the first
	// and the second copy's tokens 2..m.
	FirstLoss  []float64 `json:"first_loss"`
	SecondLoss []float64 `json:"second_loss"`
}

// copyGapPlan is one gap and its probe count.
type copyGapPlan struct{ d, probes int }

// copyPlan lists the gaps and their probe counts for the string length m;
// nil when no gap of at least 16 fits (L_max < 2m + 17).
func (c Config) copyPlan(m int) []copyGapPlan {
	if !c.CopyProbe || c.RopeScaling != "" || len(c.Multipliers) == 0 {
		return nil // the inference-time RoPE extensions skip the probe
	}
	Lmax := c.longest()
	longestGap := Lmax - 2*m - 1
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
		n = max(1, min(n, (Lmax+1)/(2*m+d))) // the packed sequence's inputs stay within L_max
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
		out = append(out, p.probes*(2*CopyProbeLen+p.d)-1)
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

// copyProbeAt is one probe in its sequence: its first copy starts at
// tokens[start], its gap at start+m (held-out text from offset gapAt of
// the split), its second copy at start+m+d.
type copyProbeAt struct {
	index int // over all gaps: the string's seed
	start int
	gapAt int64
}

// copyLayout builds every gap's sequence: strings uniform over the
// vocabulary but the end-of-document id (an end of document inside the
// string would tell the model that what follows is another text), drawn
// from a PCG seeded by (seed, the probe's index over all gaps); gaps
// read one after another from a seeded offset of the held-out split, so
// that they are distinct text while the split holds all of them (the cpu
// profile's gaps need 154K tokens), and wrapping around its end otherwise.
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
	const stream = 0x636f7079 // "copy": no other draw uses these seeds
	at := int64(rand.New(rand.NewPCG(cfg.Seed, stream)).Uint64N(uint64(n)))
	index := 0
	var seqs []copySeq
	for _, p := range plan {
		seq := copySeq{d: p.d, tokens: make([]int32, 0, p.probes*(2*m+p.d))}
		for range p.probes {
			r := rand.New(rand.NewPCG(cfg.Seed^stream, uint64(index)))
			s := make([]int32, m)
			for i := range s {
				x := int32(r.IntN(draw))
				if draw < vocab && x >= eot {
					x++
				}
				s[i] = x
			}
			gap := make([]int32, p.d)
			if err := readCyclic(held, gap, at); err != nil {
				return nil, fmt.Errorf("copy probe, gap %d: %w", p.d, err)
			}
			seq.probes = append(seq.probes, copyProbeAt{index: index, start: len(seq.tokens), gapAt: at})
			seq.tokens = append(append(append(seq.tokens, s...), gap...), s...)
			at = (at + int64(p.d)) % n
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

// copyGains scores each sequence once and computes its probes' gains;
// done is called with each pass's input tokens.
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
			first, sec := copyLoss(p.start), copyLoss(second)
			if math.IsNaN(first-sec) || math.IsInf(first-sec, 0) {
				return nil, fmt.Errorf("copy probe, gap %d, probe %d: losses %v and %v", seq.d, p.index, first, sec)
			}
			g.FirstLoss = append(g.FirstLoss, first)
			g.SecondLoss = append(g.SecondLoss, sec)
			g.Gain = append(g.Gain, first-sec)
		}
		g.MeanGain = stats.Mean(g.Gain)
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
		s.rc.Logf("copy probe d=%d: %d probes, mean gain %.4f nats (first copy %.4f, second %.4f)", g.D, g.Probes, g.MeanGain, stats.Mean(g.FirstLoss), stats.Mean(g.SecondLoss))
	}
	s.rc.Logf("copy probe: %d passes, %d tokens in %.3f s", len(seqs), cp.Tokens, time.Since(start).Seconds())
	return cp, nil
}

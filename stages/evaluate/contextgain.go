package evaluate

import (
	"fmt"
	"math"
	"time"

	"routebench/model/nativeeval"
	"routebench/stats"
)

// ContextGainThreshold is the gain (nats) past which a token counts as
// one the long context helps (ContextGain.Share).
const ContextGainThreshold = 0.5

// ContextGain is the same-token context gain at one length (LongPPL's
// long-short difference): the last S = T/2 positions before L of each
// window, each scored twice, with the window's whole context (the
// length's own pass: loss[L-S:L]) and from one extra pass over the
// window's last T tokens [L-T, L) alone, where the prediction at each of
// those positions sees T-S to T-1 tokens before its input token: every
// short-context prediction is one the model made in training (below T; a
// pass of T+S tokens scored positions past T, outside what the model was
// trained on, issue 52). A token's gain
// is its short-context loss minus its long-context loss (nats; positive:
// the long context helps). Only the primary protocol, at every length
// from 2T; on the first Config.Windows windows of the length (under
// DesignPrefixes the long windows' prefixes; under DesignIndependent the
// length's own windows, the first Windows of them, so that EqualTokens'
// many short windows do not multiply the cost).
type ContextGain struct {
	Scored    int     `json:"scored"`        // S: positions scored per window
	Short     int     `json:"short_context"` // T-S: tokens of context before the first scored position in the short pass
	Threshold float64 `json:"threshold"`     // ContextGainThreshold
	// Gain is each window's mean gain over its S tokens (nats).
	Gain []float64 `json:"gain"`
	// Share is each window's share of its S tokens whose gain exceeds
	// Threshold.
	Share []float64 `json:"share"`
}

// gainLengths is how many of cfg's lengths get a context gain (L >= 2T).
func (c Config) gainLengths() int {
	if c.RopeScaling != "" {
		return 0 // no context gain under an extension (ropescaling.go)
	}
	n := 0
	for _, m := range c.Multipliers {
		if m >= 2 {
			n++
		}
	}
	return n
}

// gainTokens is the context gain's extra work in tokens: Windows short
// passes of T at every length from 2T.
func (c Config) gainTokens() int64 {
	return int64(c.gainLengths()) * int64(c.Windows) * int64(c.Context)
}

// contextGain scores the short-context pass of the first cfg.Windows of
// the length's windows (sc.windows, each holding at least L+1 tokens; the
// long-context losses sc.losses). nil below 2T.
func (s *scorer) contextGain(L int, sc lengthScores) (*ContextGain, error) {
	T := s.cfg.Context
	S := T / 2
	if L < 2*T || S == 0 || s.cfg.RopeScaling != "" {
		return nil, nil
	}
	n := min(len(sc.windows), s.cfg.Windows)
	if len(sc.losses) < n {
		return nil, fmt.Errorf("%s, length %d: context gain over %d windows, but only %d were scored", s.cfg.stageName(), L, n, len(sc.losses))
	}
	g := &ContextGain{Scored: S, Short: T - S, Threshold: ContextGainThreshold}
	start := time.Now()
	for w, win := range sc.windows[:n] {
		long := sc.losses[w]
		if len(win) < L+1 || len(long) < L {
			return nil, fmt.Errorf("%s, length %d, window %d: %d tokens and %d losses for a context gain at %d", s.cfg.stageName(), L, w, len(win), len(long), L)
		}
		// The window's tokens [L-T, L) alone, the losses of its last S
		// positions (T-S..T-1 of the pass, all below T): the targets
		// win[L-S+1 .. L], the ones the long pass scores at long[L-S:L].
		_, pass, err := s.forward(T, w, fmt.Sprintf(" (the context gain's short pass at %d)", L), win[L-T:], nativeeval.Options{})
		if err != nil {
			return nil, err
		}
		short := pass[T-S:]
		var sum float64
		var over int
		for k, sl := range short {
			d := sl - long[L-S+k]
			if math.IsNaN(d) || math.IsInf(d, 0) {
				return nil, fmt.Errorf("%s, length %d, window %d: context gain %v at position %d", s.cfg.stageName(), L, w, d, L-S+k)
			}
			sum += d
			if d > ContextGainThreshold {
				over++
			}
		}
		g.Gain = append(g.Gain, sum/float64(S))
		g.Share = append(g.Share, float64(over)/float64(S))
		s.tally(T, fmt.Sprintf("context gain L=%d window %d/%d", L, w+1, n))
	}
	// The cost, in the log only (timings are not results).
	s.rc.Logf("L=%d context gain: %d short passes of %d tokens in %.3f s; mean gain %.4f nats", L, n, T, time.Since(start).Seconds(), stats.Mean(g.Gain))
	return g, nil
}

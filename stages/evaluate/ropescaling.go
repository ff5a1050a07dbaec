package evaluate

import (
	"fmt"
	"slices"

	"routebench/model/nativeeval"
	"routebench/modelspec/ropescale"
	"routebench/stages/tokenize/shards"
)

// RoPE extended at inference (Config.RopeScaling; claim v3x in
// docs/statistics.md): the rope model's weights evaluated with the
// method's frequencies at s = L / T for every length L (s = 1 at T, plain
// RoPE bit for bit). Since s depends on L, every length is its own forward
// pass: under DesignPrefixes each length L > T scores the first L positions
// of the same long windows in a pass of its own (not one pass summarised
// by nativeeval.Options.Prefixes), and T its own windows as usual. The
// context gain is not computed: its short pass has no one s.

// validateRopeScaling accepts an empty method or one of
// ropescale.Methods.
func (c Config) validateRopeScaling() error {
	if c.RopeScaling == "" || slices.Contains(ropescale.Methods, c.RopeScaling) {
		return nil
	}
	return fmt.Errorf("%s: rope scaling %q is not one of %v (set rope_extensions to some of them)", c.stageName(), c.RopeScaling, ropescale.Methods)
}

// ropeScaling is the extension at length L: s = L / T; the zero value
// without Config.RopeScaling.
func (c Config) ropeScaling(L int) ropescale.Scaling {
	if c.RopeScaling == "" {
		return ropescale.Scaling{}
	}
	return ropescale.Scaling{Method: c.RopeScaling, Factor: float64(L) / float64(c.Context), TrainLen: c.Context}
}

// prefixPassTokens is the tokens one long window costs under
// DesignPrefixes: the longest length, or under RopeScaling a pass per
// length above T.
func (c Config) prefixPassTokens() int64 {
	if c.RopeScaling == "" {
		return int64(c.longest())
	}
	var n int64
	for _, m := range c.Multipliers {
		if m > 1 {
			n += int64(m * c.Context)
		}
	}
	return n
}

// scoreScaledPrefixes scores long window w's prefixes of the lengths ls,
// each in its own pass at its own s, into out (the diagnostics on the
// first FarWindows windows, as the unscaled design).
func (s *scorer) scoreScaledPrefixes(w int, win []int32, span shards.Span, ls []int, out map[int]lengthScores) error {
	cfg := s.cfg
	for _, L := range ls {
		opts := nativeeval.Options{RopeScaling: cfg.ropeScaling(L)}
		if w < cfg.FarWindows {
			opts.FarDistances = cfg.FarDistances
		}
		r, loss, err := s.forward(L, w, " ("+span.Doc+")", win, opts)
		if err != nil {
			return err
		}
		sc := out[L]
		sc.losses = append(sc.losses, loss)
		sc.windows = append(sc.windows, win)
		if len(r.Heads) > 0 {
			sc.diags = append(sc.diags, r.Heads)
		}
		out[L] = sc
		s.tally(L, fmt.Sprintf("L=%d window %d (%s; %s at s=%g)", L, w+1, span.Doc, cfg.RopeScaling, opts.RopeScaling.Factor))
	}
	return nil
}

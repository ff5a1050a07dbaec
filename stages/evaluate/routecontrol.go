package evaluate

import (
	"fmt"
	"slices"

	"routebench/model/nativeeval"
)

// The repeated-byte control of the route's mixing window (claim v4m2's
// M3', docs/statistics.md): the same model's routes traced on a text of
// one repeated byte, 0x20, where the steps are not independent draws (a
// token table gives every position the same step; a projected or PaTH
// step sees near-identical states), read against the predictions of the
// held-out text's gap. A measured n* that still agrees with the prediction
// there would say the agreement does not come from the text's mixing, so
// the claim's control must fail (RouteWindow.Repeated).

// repeatedByte is the control text's byte.
const repeatedByte = 0x20

// repeatedIDs are the id of the single byte 0x20 in each tokenizer's
// vocabulary, by the shards' tokenizer name (tokenize.TokenizerBytes and
// TokenizerGPT2, spelled out so that evaluate does not import the GPT-2
// vocabulary's module; TestRepeatedIDsNameTheTokenizers holds them equal).
var repeatedIDs = map[string]int32{
	"bytes": repeatedByte,
	"gpt2":  220, // "Ġ", GPT-2's token for the lone byte 0x20
}

// repeatedToken is the id of the single byte 0x20 in tokenizer tok's
// vocabulary.
func repeatedToken(tok string) (int32, error) {
	if id, ok := repeatedIDs[tok]; ok {
		return id, nil
	}
	return 0, fmt.Errorf("evaluate: the route mixing window's repeated-byte control has no id for byte 0x20 in tokenizer %q (known: bytes, gpt2); add it to repeatedIDs in stages/evaluate/routecontrol.go", tok)
}

// RepeatedText describes the control text (RouteMixing.Repeated).
type RepeatedText struct {
	Token  int32 `json:"token"`  // the repeated id (byte 0x20)
	Tokens int   `json:"tokens"` // 2N + 1: N the longest route, so a route of N steps has N + 1 starts
}

// repeatedLength is the control pass's input length: 2N positions (2N + 1
// tokens with the last target) for the longest route N.
func (r *routeAcc) repeatedLength() int { return 2 * r.grid[len(r.grid)-1] }

// controlTokens is the pass's input length in tokens, 0 when the model has
// no route to trace (routeAcc nil or RoPE).
func (r *routeAcc) controlTokens() int64 {
	if r == nil || r.kind == routeRoPE {
		return 0
	}
	return int64(r.repeatedLength())
}

// repeatedControl traces the model's routes over the repeated text and
// writes each unit's n* there into mx.Heads[u].Repeated (0: not found on
// the same grid), for the units of the longest length (mx.Heads' order).
func (s *scorer) repeatedControl(mx *RouteMixing, tok string) error {
	r := s.route
	if r == nil || r.kind == routeRoPE || mx == nil {
		return nil
	}
	id, err := repeatedToken(tok)
	if err != nil {
		return err
	}
	L := r.repeatedLength()
	text := slices.Repeat([]int32{id}, L+1)
	out, err := s.m.LogProbs(s.rc.Context, text[:L], text[1:], nativeeval.Options{RouteTrace: true})
	if err != nil {
		return fmt.Errorf("%s, route mixing's repeated-byte control (%d tokens of id %d): %w", s.cfg.stageName(), L+1, id, err)
	}
	ctl := r.controlAcc(L)
	if err := ctl.add(0, out.Route); err != nil {
		return fmt.Errorf("%s, route mixing's repeated-byte control: %w", s.cfg.stageName(), err)
	}
	grid, _, curves := ctl.curves(0)
	if len(curves) != len(mx.Heads) {
		return fmt.Errorf("%s, route mixing's repeated-byte control: %d units, the held-out text's %d (a bug)", s.cfg.stageName(), len(curves), len(mx.Heads))
	}
	for u, c := range curves {
		if n, ok := windowOf(c, grid); ok {
			mx.Heads[u].Repeated = n
		}
	}
	mx.Repeated = &RepeatedText{Token: id, Tokens: L + 1}
	s.tally(L, "route mixing: repeated-byte control")
	return nil
}

// controlAcc is an empty accumulator of r's kind and grid over one window
// of L positions (one length bucket), for the control text.
func (r *routeAcc) controlAcc(L int) *routeAcc {
	c := &routeAcc{kind: r.kind, lengths: []int{L}, grid: slices.Clone(r.grid), layers: r.layers, H: r.H, d: r.d, P: r.P, units: r.units, maxWindows: 1}
	per := 2
	if c.kind == routePaTH {
		per = c.d * c.d
	}
	c.sum, c.cnt, c.phi, c.tokens = [][]float64{make([]float64, len(c.grid)*c.units)}, [][]int64{make([]int64, len(c.grid))}, [][]float64{make([]float64, c.units*per)}, make([]int64, 1)
	return c
}

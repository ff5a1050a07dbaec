package evaluate

import (
	"fmt"
	"strconv"
	"strings"

	"routebench/stages/tokenize/shards"
)

// Protocol names. ProtocolRandom is the primary protocol, always evaluated
// (Result.Lengths: the claims, the ratio plot and the CI gate read it);
// Config.Protocols lists the others, evaluated beside it.
const (
	// ProtocolRandom: seeded random windows of L+1 tokens from the held-out
	// stream, which may span documents; every one of the L positions scored.
	ProtocolRandom = "random"
	// ProtocolDocuments: the same, each window inside one document (its
	// end-of-document token at most the last target), at the lengths that
	// some document is long enough for (tokenize's EvalWindowsInDocuments).
	ProtocolDocuments = "in-document"
	// oldDocuments is ProtocolDocuments' name before it said what it is
	// (every protocol draws windows); it is refused with the new name.
	oldDocuments = "windows"
	// slidingPrefix + S: each window scores only its last S positions, the
	// other L-S are context (sliding-window evaluation with stride S, as in
	// the ALiBi paper's analysis), so every scored token sees L-S to L-1
	// tokens of context.
	slidingPrefix = "sliding:"
	// docsPrefix joins ProtocolDocuments to a sliding protocol:
	// "in-document+sliding:S" scores the last S positions of in-document windows.
	docsPrefix = ProtocolDocuments + "+"
)

// validProtocols is the list a bad protocol string's error shows.
const validProtocols = `"in-document", "sliding:S" and "in-document+sliding:S" (S a stride in tokens, e.g. sliding:64); "random" is always evaluated`

// Protocol is a parsed protocol string.
type Protocol struct {
	Name        string // as written in Config.Protocols
	InDocuments bool   // windows inside one document (else anywhere in the stream)
	Stride      int    // > 0: only the last Stride positions of each window are scored; 0: all
}

// ParseProtocol reads one entry of Config.Protocols.
func ParseProtocol(s string) (Protocol, error) {
	p := Protocol{Name: s}
	rest := s
	if old, ok := strings.CutPrefix(s, oldDocuments); ok && (old == "" || strings.HasPrefix(old, "+")) {
		return Protocol{}, fmt.Errorf("evaluation protocol %q is now called %q (windows inside one document); valid: %s", s, ProtocolDocuments+old, validProtocols)
	}
	if rest == ProtocolDocuments {
		return Protocol{Name: s, InDocuments: true}, nil
	}
	if r, ok := strings.CutPrefix(rest, docsPrefix); ok {
		p.InDocuments, rest = true, r
	}
	num, ok := strings.CutPrefix(rest, slidingPrefix)
	if !ok {
		if s == ProtocolRandom {
			return Protocol{}, fmt.Errorf("evaluation protocol %q is always evaluated; list only the others (%s)", s, validProtocols)
		}
		return Protocol{}, fmt.Errorf("evaluation protocol %q is unknown; valid: %s", s, validProtocols)
	}
	S, err := strconv.Atoi(num)
	if err != nil || S <= 0 {
		return Protocol{}, fmt.Errorf("evaluation protocol %q: the stride %q is not a positive number of tokens; valid: %s", s, num, validProtocols)
	}
	p.Stride = S
	return p, nil
}

// parseProtocols parses Config.Protocols, refusing duplicates.
func parseProtocols(names []string) ([]Protocol, error) {
	var out []Protocol
	seen := map[string]bool{}
	for _, n := range names {
		p, err := ParseProtocol(n)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, fmt.Errorf("evaluation protocol %q is listed twice", n)
		}
		seen[n] = true
		out = append(out, p)
	}
	return out, nil
}

// Describe says what the protocol measures, for eval.json and RESULTS.md.
func (p Protocol) Describe() string {
	where := "seeded random windows of L+1 tokens from the evaluation stream (they may span documents)"
	if p.InDocuments {
		where = "seeded random windows of L+1 tokens, each inside one document, at the lengths some document holds"
	}
	if p.Stride == 0 {
		return where + "; every position scored"
	}
	return fmt.Sprintf("%s; only the last %d positions of each window scored (sliding-window evaluation, stride %d: "+
		"every scored token sees L-%d to L-1 tokens of context; all L positions where L <= %d)", where, p.Stride, p.Stride, p.Stride, p.Stride)
}

// scored is the number of positions, at the end of a window of L, that the
// protocol scores.
func (p Protocol) scored(L int) int {
	if p.Stride == 0 || p.Stride >= L {
		return L
	}
	return p.Stride
}

// windowLoss is the mean loss over the scored positions of one window.
func (p Protocol) windowLoss(loss []float64) float64 {
	k := p.scored(len(loss))
	s := 0.0
	for _, v := range loss[len(loss)-k:] {
		s += v
	}
	return s / float64(k)
}

// placement draws the windows of one length; the random and in-document
// placements share no windows, and every protocol of one placement scores
// the same windows (one forward pass each).
type placement bool

const (
	inStream    placement = false
	inDocuments placement = true
)

// windows draws n windows of L+1 tokens. ok is false, with the reason, when
// no document holds L+1 tokens (in-document placement only).
func (pl placement) windows(ds *shards.Dataset, seed uint64, L, n int) (ws [][]int32, ok bool, why string, err error) {
	if pl == inStream {
		ws, err = ds.EvalWindows(seed, L, n)
		return ws, err == nil, "", err
	}
	docs, err := ds.Documents(shards.SplitHeldOut)
	if err != nil {
		return nil, false, "", err
	}
	var longest int64
	for _, d := range docs {
		longest = max(longest, d.Tokens)
	}
	if longest < int64(L)+1 {
		return nil, false, fmt.Sprintf("no document holds the %d tokens a window needs (longest: %d of %d documents)", L+1, longest, len(docs)), nil
	}
	ws, err = ds.EvalWindowsInDocuments(seed, L, n)
	return ws, err == nil, "", err
}

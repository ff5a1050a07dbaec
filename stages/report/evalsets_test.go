package report

import (
	"strings"
	"testing"

	"routebench/stages/evaluate"
	"routebench/stats"
)

func lengths(T int, ratios ...float64) []evaluate.LengthResult {
	var out []evaluate.LengthResult
	for i, r := range ratios {
		m := 1 << i
		out = append(out, evaluate.LengthResult{L: m * T, Multiplier: m, PPL: stats.Interval{Value: 3 * r, Lo: 2.9 * r, Hi: 3.1 * r},
			Ratio: stats.Interval{Value: r, Lo: r - 0.01, Hi: r + 0.01}})
	}
	return out
}

// The further protocols and the evaluation corpora get tables of their
// own, apart from the primary protocol's, named by protocol and corpus,
// with the lengths a protocol skipped and why.
func TestEvalSetTables(t *testing.T) {
	const T = 32
	result := func(corpus string, main, slide, docs []evaluate.LengthResult) *evaluate.Result {
		r := &evaluate.Result{Corpus: corpus, Source: "corpus: " + corpus, Tokens: 5000, Documents: 7, Lengths: main,
			Protocol: evaluate.Config{Context: T, Windows: 4, Seed: 7}}
		r.Protocols = []evaluate.ProtocolResult{{Protocol: "sliding:16", Description: "scored last", Lengths: slide},
			{Protocol: "windows", Description: "in documents", Lengths: docs, Skipped: []evaluate.SkippedLength{{L: 4 * T, Reason: "no document holds 129 tokens"}}}}
		return r
	}
	vs := []*variantData{
		{name: "rope", eval: result("", lengths(T, 1, 1.5, 2.5), lengths(T, 1, 0.97, 0.95), lengths(T, 1, 1.4)),
			corpora: map[string]*evaluate.Result{"wiki.jsonl": result("wiki.jsonl", lengths(T, 1, 1.7, 3.25), lengths(T, 1, 0.9, 0.8), lengths(T, 1, 1.6))}},
		{name: "alibi", eval: result("", lengths(T, 1, 1.01, 1.02), lengths(T, 1, 0.99, 0.98), lengths(T, 1))},
	}
	var b strings.Builder
	renderProtocols(&b, vs, T)
	renderEvalCorpora(&b, Config{EvalCorpora: []string{"wiki.jsonl", "absent"}}, vs)
	md := b.String()
	for _, want := range []string{
		"## Other evaluation protocols (held-out split)", "### `sliding:16`\n\nScored last.",
		"| rope | 3.000 [2.900, 3.100] | 1.00 [0.99, 1.01] | 0.97 [0.96, 0.98] | 0.95 [0.94, 0.96] |",
		"| alibi | 3.000 [2.900, 3.100] | 1.00 [0.99, 1.01] | - |",
		"Not evaluated: L = 128: no document holds 129 tokens.",
		"## Evaluation corpora", "### `wiki.jsonl`\n\nSource `corpus: wiki.jsonl`: 5000 tokens, 7 document(s).",
		"| rope | 3.000 [2.900, 3.100] | 1.00 [0.99, 1.01] | 1.70 [1.69, 1.71] | 3.25 [3.24, 3.26] |",
		"#### `sliding:16`", "| rope | 3.000 [2.900, 3.100] | 1.00 [0.99, 1.01] | 0.90 [0.89, 0.91] | 0.80 [0.79, 0.81] |",
		"### `absent`\n\nNo evaluation results for this corpus in the plan.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md[strings.Index(md, "## Evaluation corpora"):], "| alibi |") {
		t.Errorf("alibi has no result on wiki.jsonl but a row:\n%s", md)
	}
	b.Reset()
	vs[0].eval.Protocols, vs[1].eval.Protocols = nil, nil
	renderProtocols(&b, vs, T)
	renderEvalCorpora(&b, Config{}, vs)
	if b.Len() != 0 {
		t.Errorf("no further protocols and no corpora, yet:\n%s", b.String())
	}
}

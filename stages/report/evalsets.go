package report

import (
	"fmt"
	"strings"

	"routebench/stages/evaluate"
)

// tableRow is one variant's lengths under one protocol on one evaluation set.
type tableRow struct {
	variant string
	lengths []evaluate.LengthResult
}

// ratioTable writes the main table's columns (PPL at T, then the ratio at
// every length) for rows that may lack some lengths ("-").
func ratioTable(b *strings.Builder, T int, rows []tableRow) {
	var mults []int
	for _, r := range rows {
		for _, l := range r.lengths {
			if len(mults) == 0 || l.Multiplier > mults[len(mults)-1] {
				mults = append(mults, l.Multiplier)
			}
		}
	}
	b.WriteString("| variant | PPL at T |")
	for _, m := range mults {
		fmt.Fprintf(b, " %dT (%d) |", m, m*T)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(mults)) + "\n")
	for _, r := range rows {
		at := map[int]evaluate.LengthResult{}
		for _, l := range r.lengths {
			at[l.Multiplier] = l
		}
		ppl := "-"
		if l, ok := at[1]; ok {
			ppl = fmt.Sprintf("%.3f [%.3f, %.3f]", l.PPL.Value, l.PPL.Lo, l.PPL.Hi)
		}
		fmt.Fprintf(b, "| %s | %s |", r.variant, ppl)
		for _, m := range mults {
			if l, ok := at[m]; ok {
				fmt.Fprintf(b, " %.2f [%.2f, %.2f] |", l.Ratio.Value, l.Ratio.Lo, l.Ratio.Hi)
			} else {
				b.WriteString(" - |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// protocolTables writes one table per further protocol of the results
// (every variant's results list the same protocols: one profile field).
func protocolTables(b *strings.Builder, T int, heading string, results []*evaluate.Result, names []string) {
	var first *evaluate.Result
	for _, r := range results {
		if r != nil {
			first = r
			break
		}
	}
	if first == nil {
		return
	}
	for k, pr := range first.Protocols {
		fmt.Fprintf(b, "%s `%s`\n\n%s. Ratios are relative to this protocol's own PPL at T.%s\n\n", heading, pr.Protocol, capitalize(pr.Description), scoredTokens(pr))
		var rows []tableRow
		skipped := map[string]bool{}
		var skips []string
		for i, r := range results {
			if r == nil || k >= len(r.Protocols) {
				continue
			}
			rows = append(rows, tableRow{names[i], r.Protocols[k].Lengths})
			for _, s := range r.Protocols[k].Skipped {
				if note := fmt.Sprintf("L = %d: %s", s.L, s.Reason); !skipped[note] {
					skipped[note] = true
					skips = append(skips, note)
				}
			}
		}
		ratioTable(b, T, rows)
		if len(skips) > 0 {
			fmt.Fprintf(b, "Not evaluated: %s.\n\n", strings.Join(skips, "; "))
		}
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// renderProtocols reports the held-out split's further protocols, apart
// from the primary protocol's table above.
func renderProtocols(b *strings.Builder, vs []*variantData, T int) {
	var results []*evaluate.Result
	var names []string
	for _, v := range vs {
		results, names = append(results, v.eval), append(names, v.name)
	}
	has := false
	for _, r := range results {
		has = has || r != nil && len(r.Protocols) > 0
	}
	if !has {
		return
	}
	b.WriteString("## Other evaluation protocols (held-out split)\n\nThe same models and held-out split as the ratio table above, under the profile's `eval_protocols`.\n\n")
	protocolTables(b, T, "###", results, names)
}

// renderEvalCorpora reports each evaluation corpus beside the held-out
// split: the primary protocol's table, then its further protocols.
func renderEvalCorpora(b *strings.Builder, cfg Config, vs []*variantData) {
	if len(cfg.EvalCorpora) == 0 {
		return
	}
	b.WriteString("## Evaluation corpora\n\nThe trained models (the same weights as above, not retrained) on other text, tokenized on its own with the training tokenizer, every document evaluation text; the same protocol and seeds as the held-out split.\n\n")
	for _, c := range cfg.EvalCorpora {
		var results []*evaluate.Result
		var names []string
		var rows []tableRow
		var first *evaluate.Result
		for _, v := range vs {
			r := v.corpora[c]
			if r == nil {
				continue
			}
			if first == nil {
				first = r
			}
			results, names = append(results, r), append(names, v.name)
			rows = append(rows, tableRow{v.name, r.Lengths})
		}
		fmt.Fprintf(b, "### `%s`\n\n", c)
		if first == nil {
			b.WriteString("No evaluation results for this corpus in the plan.\n\n")
			continue
		}
		T := first.Protocol.Context
		fmt.Fprintf(b, "Source `%s`: %d tokens, %d document(s). Cells: ratio PPL(L)/PPL(T) with its %s interval over windows (Welch's t; seed %d): %s. T = %d tokens.\n\n",
			first.Source, first.Tokens, first.Documents, confidenceText, first.Protocol.Seed, windowDesign(first), T)
		ratioTable(b, T, rows)
		protocolTables(b, T, "####", results, names)
	}
}

// scoredTokens says how many tokens a protocol scores at each length
// (windows x scored positions), when it scores fewer than the whole window:
// a sliding protocol at the longest length rests on these few tokens.
func scoredTokens(pr evaluate.ProtocolResult) string {
	var parts []string
	for _, l := range pr.Lengths {
		if l.Scored > 0 {
			parts = append(parts, fmt.Sprintf("%d at %d (%d windows x %d)", len(l.WindowLoss)*l.Scored, l.L, len(l.WindowLoss), l.Scored))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " Tokens scored per length: " + strings.Join(parts, ", ") + "."
}

package report

import (
	"math"
	"strings"
	"testing"

	"routebench/stages/evaluate"
)

// The summary table has one row per claim with its v1 and v2 verdicts, a
// v2 verdict column per evaluation corpus, the effect against its edge,
// both ratios and the seeds that reproduce it alone.
func TestClaimSummaryRendersEveryCorpus(t *testing.T) {
	flat := map[string]*evaluate.Result{"alibi": v2Run("alibi", flatAt(0.9), nil, nil)}
	steep := map[string]*evaluate.Result{"alibi": v2Run("alibi", flatAt(math.Exp(0.5)), nil, nil)}
	g := seedGroups{perSeed: []map[string]*evaluate.Result{flat}}
	var err error
	if g.claims, err = ClaimsOverSeeds(g.perSeed, nil); err != nil {
		t.Fatal(err)
	}
	cc, err := ClaimsOverSeeds([]map[string]*evaluate.Result{steep}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.corpusClaims = []corpusClaims{{corpus: "gutenberg", claims: cc}}
	var b strings.Builder
	renderClaims(&b, g, nil)
	md := b.String()
	if !strings.Contains(md, "| claim | v1 | v2 | v2 on gutenberg | v2 effect [95%] vs edge | ratios | seeds alone (v2) | power |") {
		t.Fatalf("summary header missing or without the corpus column:\n%s", md)
	}
	var row string
	for _, l := range strings.Split(md, "\n") {
		if strings.Contains(l, "(`alibi-flat`)") {
			row = l
		}
	}
	// On the training text alibi is flat (0.90 [0.85, 0.95]); on gutenberg
	// it rises to e^0.5 = 1.65: v2 REPRODUCED there, NOT REPRODUCED here.
	for _, want := range []string{"| REPRODUCED | **REPRODUCED** | NOT REPRODUCED |", "0.900 [0.850, 0.950] vs 1.10", "paper 0.900", "prefix 0.900", "| 1 of 1 |"} {
		if !strings.Contains(row, want) {
			t.Errorf("alibi-flat row lacks %q:\n%s", want, row)
		}
	}
	if !strings.Contains(md, "### Claims v1") || !strings.Contains(md, "### Claims v2") {
		t.Error("the v1 and v2 detail tables are not labelled")
	}
}

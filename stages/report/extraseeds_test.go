package report

import (
	"reflect"
	"strings"
	"testing"
)

// The main table's seed sentence names the variants a registration trains
// at more seeds than the first, and only those.
func TestExtraSeeds(t *testing.T) {
	var runs []*variantData
	for _, r := range []struct {
		v string
		s uint64
	}{{"rope", 21}, {"rope", 22}, {"nope", 21}, {"nope", 31}, {"nope", 32}, {"path", 21}, {"path", 31}, {"alibi", 21}, {"learned-qk", 21}} {
		runs = append(runs, &variantData{variant: r.v, seed: r.s})
	}
	got := extraSeeds(runs, []uint64{21, 22}, []string{"rope"})
	want := map[string][]uint64{"nope": {21, 31, 32}, "path": {21, 31}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("extraSeeds = %v, want %v", got, want)
	}
	var b strings.Builder
	renderMainTable(&b, nil, 512, []uint64{21, 22}, []string{"rope"}, got)
	if s := b.String(); !strings.Contains(s, "nope at 21, 31, 32; path at 21, 31.") {
		t.Fatalf("the sentence does not name nope's seeds:\n%s", s)
	}
	b.Reset()
	renderMainTable(&b, nil, 512, []uint64{21, 22}, []string{"rope"}, nil)
	if strings.Contains(b.String(), "variant_seeds") {
		t.Fatal("without extra seeds the sentence still names variant_seeds (the control)")
	}
}

package shards_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"routebench/stages/tokenize"
	"routebench/stages/tokenize/shards"
)

// stratifiedSet holds out four documents, one too short for a window of 20.
func stratifiedSet(t *testing.T) *shards.Dataset {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "c")
	writeFiles(t, dir, map[string]string{
		"train.txt": strings.Repeat("t", 50),
		"held1.txt": strings.Repeat("a", 90),
		"held2.txt": strings.Repeat("b", 10), // too short for L=20: never used
		"held3.txt": strings.Repeat("c", 45),
		"held4.txt": strings.Repeat("d", 66),
	})
	cfg := testConfig(tokenize.TokenizerBytes, dir)
	cfg.HeldOut, cfg.ShardTokens = []string{"held1", "held2", "held3", "held4"}, 16
	_, paths := runOK(t, cfg)
	d, err := shards.Open(paths)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestEvalWindowsStratified: windows go round the long documents, one per
// document before any gets a second, never overlap, lie inside their
// document, are deterministic, and are refused when a document's segment
// cannot hold one.
func TestEvalWindowsStratified(t *testing.T) {
	d := stratifiedSet(t)
	const L = 20
	ws, spans, err := d.EvalWindowsStratified(5, L, 6)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[int32]int{}
	for i, w := range ws {
		if len(w) != L+1 {
			t.Fatalf("window %d has %d tokens", i, len(w))
		}
		for k, v := range w {
			if v == 256 && k != len(w)-1 || v != 256 && v != w[0] {
				t.Fatalf("window %d spans documents: %v", i, w)
			}
		}
		if i < 3 && docs[w[0]] > 0 {
			t.Errorf("window %d is a second one in document %q before every long document has one", i, w[0])
		}
		docs[w[0]]++
		for j := range i {
			a, b := spans[i], spans[j]
			if a.Offset < b.Offset+b.Tokens && b.Offset < a.Offset+a.Tokens {
				t.Errorf("windows %d and %d overlap: %+v %+v", j, i, b, a)
			}
		}
	}
	if len(docs) != 3 || docs['b'] != 0 {
		t.Errorf("windows per document %v, want two in each of a, c, d", docs)
	}
	again, spans2, _ := d.EvalWindowsStratified(5, L, 6)
	if !slices.EqualFunc(ws, again, slices.Equal) || !slices.Equal(spans, spans2) {
		t.Errorf("not deterministic")
	}
	if _, _, err := d.EvalWindowsStratified(5, L, 9); err == nil || !strings.Contains(err.Error(), "segments") {
		t.Errorf("three windows in a 46-token document: %v", err)
	}
}

// TestEvalWindowsAvoiding: no window overlaps an avoided span, and without
// spans to avoid the windows are EvalWindows'.
func TestEvalWindowsAvoiding(t *testing.T) {
	d := stratifiedSet(t)
	_, spans, err := d.EvalWindowsStratified(5, 40, 2)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := d.EvalWindows(9, 8, 50)
	none, err := d.EvalWindowsAvoiding(9, 8, 50, nil)
	if err != nil || !slices.EqualFunc(plain, none, slices.Equal) {
		t.Fatalf("with nothing to avoid the windows are not EvalWindows' (%v)", err)
	}
	held, _ := d.Tokens(shards.SplitHeldOut)
	all := make([]int32, held.Len())
	if err := held.Read(all, 0); err != nil {
		t.Fatal(err)
	}
	ws, err := d.EvalWindowsAvoiding(9, 8, 50, spans)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for i, w := range ws {
		// Every place the window could come from must lie outside the spans.
		ok := false
		for off := 0; off+len(w) <= len(all); off++ {
			if !slices.Equal(all[off:off+len(w)], w) {
				continue
			}
			inside := false
			for _, s := range spans {
				if int64(off) < s.Offset+s.Tokens && s.Offset < int64(off+len(w)) {
					inside = true
				}
			}
			ok = ok || !inside
		}
		if !ok {
			t.Errorf("window %d overlaps an avoided span", i)
		}
		if !slices.Equal(w, plain[i]) {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("no window was redrawn: the test does not exercise the avoidance")
	}
}

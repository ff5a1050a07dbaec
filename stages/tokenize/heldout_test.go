package tokenize

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"routebench/stages/tokenize/shards"
)

// smallCorpusConfig is a user corpus under nanoGPT's fraction, which holds
// out nothing of a few documents, with the top-up asked for.
func smallCorpusConfig(corpus string, minHeld, minTrain int64) Config {
	cfg := testConfig(TokenizerBytes, corpus)
	cfg.ValFraction, cfg.Seed, cfg.ShardTokens = DefaultValFraction, DefaultSeed, 1000
	cfg.MinHeldOutTokens, cfg.MinTrainTokens = minHeld, minTrain
	return cfg
}

// uniqueDocs writes n .txt documents of size bytes made of markers that
// occur once in the corpus ("<3.7>" is not inside "<3.17>" or "<13.7>"), so
// a leak of held-out text into train can be found by searching for it.
func uniqueDocs(t *testing.T, n, size int) (string, map[string]string) {
	dir := filepath.Join(t.TempDir(), "docs")
	files := map[string]string{}
	for i := range n {
		var b strings.Builder
		for j := 0; b.Len() < size; j++ {
			fmt.Fprintf(&b, "<%d.%d> ", i, j)
		}
		files[fmt.Sprintf("d%03d.txt", i)] = b.String()[:size]
	}
	writeFiles(t, dir, files)
	return dir, files
}

func manifestOf(t *testing.T, paths []string) (*shards.Dataset, *shards.Manifest) {
	t.Helper()
	d, err := shards.Open(paths)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, d.Manifest()
}

// checkNoLeak checks that every document is in exactly one split, whole,
// except the split one, whose head (train) and tail (held out) together are
// the document; and that no held-out text appears in the train stream.
func checkNoLeak(t *testing.T, paths []string, files map[string]string) {
	t.Helper()
	d, m := manifestOf(t, paths)
	train, held := streamText(t, paths, shards.SplitTrain), streamText(t, paths, shards.SplitHeldOut)
	parts := map[string][]string{} // id -> texts of its entries, train first
	for _, split := range []string{shards.SplitTrain, shards.SplitHeldOut} {
		stream := train
		if split == shards.SplitHeldOut {
			stream = held
		}
		docs, err := d.Documents(split)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range docs {
			parts[doc.ID] = append(parts[doc.ID], stream[doc.Start:doc.Start+doc.Tokens])
			if split == shards.SplitHeldOut {
				text := strings.TrimSuffix(stream[doc.Start:doc.Start+doc.Tokens], "|")
				if strings.Contains(train, text) {
					t.Errorf("held-out %s (%s) leaks into train: %.40q", doc.ID, doc.Part, text)
				}
			}
		}
	}
	for name, body := range files {
		id := "docs/" + name
		got := strings.Join(parts[id], "")
		if got != body+"|" {
			t.Errorf("%s: its entries %q rebuild %q, want the document once", id, parts[id], got)
		}
		if len(parts[id]) == 2 && (m.HeldOut.Split == nil || m.HeldOut.Split.ID != id) {
			t.Errorf("%s is in both splits, but the manifest's split document is %+v", id, m.HeldOut.Split)
		}
	}
}

func TestHeldOutOneFileKeepsTheTail(t *testing.T) {
	corpus, files := uniqueDocs(t, 1, 5000)
	_, paths := runOK(t, smallCorpusConfig(corpus, 1025, 8*33))
	d, m := manifestOf(t, paths)
	info := d.Info()
	if info.Splits[shards.SplitHeldOut].Tokens != 1025 || info.Splits[shards.SplitTrain].Tokens != 5001-1025 {
		t.Errorf("splits %+v, want the last 1025 of 5001 tokens held out", info.Splits)
	}
	want := shards.ManifestSplitDocument{ID: "docs/d000.txt", TrainTokens: 5001 - 1025, HeldOutTokens: 1025}
	if h := m.HeldOut; h.Rule != HeldOutByTopUp || h.MinTokens != 1025 || h.ByFraction != 0 || h.TopUp != 0 || h.Split == nil || *h.Split != want {
		t.Errorf("manifest held_out %+v (split %+v), want a top-up that cut %+v", h, h.Split, want)
	}
	for split, part := range map[string]string{shards.SplitTrain: shards.PartHead, shards.SplitHeldOut: shards.PartTail} {
		docs, _ := d.Documents(split)
		if len(docs) != 1 || docs[0].Part != part || info.Splits[split].Documents != 1 {
			t.Errorf("%s documents %+v, want the one document's %s", split, docs, part)
		}
	}
	if got := streamText(t, paths, shards.SplitHeldOut); got != files["d000.txt"][5000-1024:]+"|" {
		t.Errorf("held-out stream %.40q..., want the document's last 1024 bytes and its end", got)
	}
	checkNoLeak(t, paths, files)
}

func TestHeldOutFewDocuments(t *testing.T) {
	for _, n := range []int{3, 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			corpus, files := uniqueDocs(t, n, 600)
			cfg := smallCorpusConfig(corpus, 1000, 300)
			_, paths := runOK(t, cfg)
			d, m := manifestOf(t, paths)
			held := d.Info().Splits[shards.SplitHeldOut].Tokens
			if held < 1000 || m.HeldOut.Rule != HeldOutByTopUp {
				t.Fatalf("held out %d tokens by %+v, want >= 1000 by the top-up", held, m.HeldOut)
			}
			// Whole documents by ascending hash: the held-out ones are the
			// first in hash order, and the next one would not have been needed.
			var ids []string
			for name := range files {
				ids = append(ids, "docs/"+name)
			}
			slices.SortFunc(ids, func(a, b string) int {
				if docHash(cfg.Seed, a) < docHash(cfg.Seed, b) {
					return -1
				}
				return 1
			})
			docs, _ := d.Documents(shards.SplitHeldOut)
			var got []string
			for _, doc := range docs {
				got = append(got, doc.ID)
			}
			slices.Sort(got)
			wantIDs := slices.Clone(ids[:len(got)])
			slices.Sort(wantIDs)
			if !slices.Equal(got, wantIDs) {
				t.Errorf("held out %v, want the first %d by hash %v", got, len(got), wantIDs)
			}
			if held-601 >= 1000 {
				t.Errorf("held out %d tokens: one document fewer would have been enough", held)
			}
			if n == 3 { // 2 x 601 held out leaves 601 >= 300 for train: nothing is cut
				if m.HeldOut.Split != nil || m.HeldOut.TopUp != 2 || m.HeldOut.TopUpTokens != 1202 {
					t.Errorf("3 documents: %+v, want 2 whole documents", m.HeldOut)
				}
			}
			checkNoLeak(t, paths, files)
		})
	}
}

// Three documents of 601 tokens, 1500 held out, 300 for train: two whole
// documents are 1202, the third cannot go whole, so its last 298 tokens do.
func TestHeldOutCutsTheNextDocument(t *testing.T) {
	corpus, files := uniqueDocs(t, 3, 600)
	_, paths := runOK(t, smallCorpusConfig(corpus, 1500, 300))
	d, m := manifestOf(t, paths)
	if s := m.HeldOut.Split; m.HeldOut.TopUp != 2 || s == nil || s.HeldOutTokens != 298 || s.TrainTokens != 303 {
		t.Errorf("held_out %+v (split %+v), want 2 whole documents and the tail 298 of the third", m.HeldOut, s)
	}
	last := slices.MaxFunc(slices.Collect(maps.Keys(files)), func(a, b string) int {
		return cmp.Compare(docHash(DefaultSeed, "docs/"+a), docHash(DefaultSeed, "docs/"+b))
	})
	if s := m.HeldOut.Split; s == nil || s.ID != "docs/"+last {
		t.Errorf("cut %+v, want the last document by hash, docs/%s", s, last)
	}
	if sp := d.Info().Splits; sp[shards.SplitHeldOut].Tokens != 1500 || sp[shards.SplitTrain].Tokens != 303 || sp[shards.SplitHeldOut].Documents != 3 {
		t.Errorf("splits %+v", sp)
	}
	checkNoLeak(t, paths, files)
}

// OpenWebText's layout: one Parquet file of many short documents, as the
// user's 233-document corpus, which the fraction alone left without a
// held-out split.
func TestHeldOutParquetCorpus(t *testing.T) {
	dir := t.TempDir()
	var texts []string
	for i := range 233 {
		texts = append(texts, fmt.Sprintf("row %d of a small web corpus.", i))
	}
	writeParquet(t, filepath.Join(dir, "train-00000-of-00001.parquet"), map[string][]string{"text": texts}, []string{"text"})
	_, paths := runOK(t, smallCorpusConfig(dir, 128*8+1, 8*9))
	d, m := manifestOf(t, paths)
	if held := d.Info().Splits[shards.SplitHeldOut]; held.Tokens < 1025 || m.HeldOut.TopUp < 30 || m.HeldOut.TopUp != held.Documents {
		t.Errorf("held out %+v by %+v, want >= 1025 tokens of whole rows", held, m.HeldOut)
	}
}

func TestHeldOutCorpusTooShort(t *testing.T) {
	corpus, _ := uniqueDocs(t, 2, 100) // 202 tokens
	cfg := smallCorpusConfig(corpus, 150, 100)
	out := filepath.Join(t.TempDir(), "out")
	err := Run(context.Background(), cfg, out, nil)
	if err == nil {
		t.Fatal("Run succeeded on a corpus shorter than the two splits' minimums")
	}
	for _, w := range []string{"2 documents hold 202 tokens", "held-out split needs 150 (MinHeldOutTokens)", "train split 100 (MinTrainTokens), 250 in all", "at least 48 more tokens"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("output left behind: %v", ents)
	}
	cfg.MinTrainTokens = 52 // 150 + 52 = 202: exactly enough
	runOK(t, cfg)
}

func TestHeldOutFractionKeepsTrainMinimum(t *testing.T) {
	corpus, _ := uniqueDocs(t, 20, 100)
	cfg := smallCorpusConfig(corpus, 10, 1500)
	cfg.ValFraction = 0.5
	err := Run(context.Background(), cfg, filepath.Join(t.TempDir(), "out"), nil)
	if err == nil || !strings.Contains(err.Error(), "under the 1500 it needs (MinTrainTokens); lower ValFraction") {
		t.Errorf("a fraction leaving train under its minimum: %v", err)
	}
	cfg.MinTrainTokens = 100
	_, paths := runOK(t, cfg)
	if _, m := manifestOf(t, paths); m.HeldOut.Rule != HeldOutByFraction || m.HeldOut.ByFraction == 0 || m.HeldOut.TopUp != 0 {
		t.Errorf("fraction 0.5 of 20 documents: %+v, want the fraction rule alone", m.HeldOut)
	}
}

func TestHeldOutTopUpIsDeterministic(t *testing.T) {
	corpus, _ := uniqueDocs(t, 20, 600)
	for _, tok := range []string{TokenizerBytes, TokenizerGPT2} {
		cfg := smallCorpusConfig(corpus, 4000, 300)
		cfg.Tokenizer, cfg.Workers = tok, 1
		_, a := runOK(t, cfg)
		cfg.Workers = 3
		_, b := runOK(t, cfg)
		if len(a) != len(b) || len(a) < 3 {
			t.Fatalf("%s: outputs %v and %v", tok, a, b)
		}
		for i := range a {
			x, _ := os.ReadFile(a[i])
			y, _ := os.ReadFile(b[i])
			if filepath.Base(a[i]) != filepath.Base(b[i]) || !bytes.Equal(x, y) {
				t.Errorf("%s: %s differs between two runs", tok, filepath.Base(a[i]))
			}
		}
	}
}

// The minimums act on the ValFraction rule only: with named files they
// would change nothing, so they must not re-key the default corpus.
func TestHeldOutMinimumsLeaveNamedFilesKey(t *testing.T) {
	corpus, _ := uniqueDocs(t, 3, 50)
	cfg := smallCorpusConfig(corpus, 0, 0)
	cfg.HeldOut = []string{"d000"}
	k0, err := NewKey(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MinHeldOutTokens, cfg.MinTrainTokens = 16385, 1032
	k1, _ := NewKey(cfg)
	if !reflect.DeepEqual(k0, k1) {
		t.Errorf("named HeldOut: the minimums re-key %+v -> %+v", k0, k1)
	}
	cfg.HeldOut = nil
	k2, _ := NewKey(cfg)
	cfg.MinHeldOutTokens++
	if k3, _ := NewKey(cfg); reflect.DeepEqual(k2, k3) {
		t.Error("ValFraction rule: MinHeldOutTokens does not re-key")
	}
}

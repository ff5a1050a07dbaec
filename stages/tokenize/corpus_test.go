package tokenize

import (
	"os"
	"path/filepath"
	"testing"

	"routebench/stages/tokenize/shards"
)

// TestDefaultCorpus tokenizes the fetched Gutenberg corpus end to end and
// checks the split the package documents (DefaultHeldOut). Skipped when the
// corpus is not fetched; the gpt2 half is skipped with -short (~2 s).
func TestDefaultCorpus(t *testing.T) {
	defaultBooksDir(t)
	cases := []struct {
		tokenizer string
		minEval   int // the profile's longest window: 128 x training length
		heldOut   map[string]int64
		train     int64
	}{
		// Counts include one EOT per book; moby_dick's CRLFs became LFs.
		{TokenizerBytes, 128 * 128, map[string]int64{"austen-emma.txt": 887_072, "melville-moby_dick.txt": 1_220_067}, 9_637_774},
		{TokenizerGPT2, 128 * 512, map[string]int64{"austen-emma.txt": 223_076, "melville-moby_dick.txt": 322_281}, 2_619_122},
	}
	for _, c := range cases {
		t.Run(c.tokenizer, func(t *testing.T) {
			if testing.Short() && c.tokenizer == TokenizerGPT2 {
				t.Skip("gpt2 on the whole corpus takes seconds; run without -short")
			}
			out, paths := runOK(t, DefaultConfig(c.tokenizer))
			d, err := shards.Open(paths)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			m := d.Manifest()
			if m.InputFiles != 18 || m.Normalised["latin1"] != 2 || m.Normalised["crlf"] != 4 || m.SkippedEmpty != 0 {
				t.Errorf("manifest: %d files, normalised %v, skipped %d", m.InputFiles, m.Normalised, m.SkippedEmpty)
			}
			info := d.Info()
			if info.Splits[shards.SplitTrain].Documents != 16 || info.Splits[shards.SplitHeldOut].Documents != 2 {
				t.Errorf("splits %+v", info.Splits)
			}
			var heldTotal int64
			for book, n := range m.HeldOutFiles {
				heldTotal += n
				if want := c.heldOut[book]; n != want {
					t.Errorf("%s: %d tokens, want %d", book, n, want)
				}
				if n < int64(c.minEval)+1 {
					t.Errorf("%s: %d tokens, shorter than the longest window %d", book, n, c.minEval)
				}
			}
			if info.Splits[shards.SplitTrain].Tokens != c.train {
				t.Errorf("train split %d tokens, want %d", info.Splits[shards.SplitTrain].Tokens, c.train)
			}
			if heldTotal != info.Splits[shards.SplitHeldOut].Tokens || len(m.HeldOutFiles) != 2 {
				t.Errorf("held-out files %v, split %d tokens", m.HeldOutFiles, info.Splits[shards.SplitHeldOut].Tokens)
			}
			t.Logf("%s: train %d tokens, held out %d tokens %v; output in %s",
				c.tokenizer, info.Splits[shards.SplitTrain].Tokens, info.Splits[shards.SplitHeldOut].Tokens, m.HeldOutFiles, filepath.Base(out))
		})
	}
}

// TestGPT2MatchesTiktokenCount checks the GPT-2 encoder against reference
// tiktoken "gpt2": DATA-NOTES.md records 3,213,664 tokens for the 18 raw books
// (no normalisation, no EOT), with ids identical to tiktoken's.
func TestGPT2MatchesTiktokenCount(t *testing.T) {
	dir := defaultBooksDir(t)
	if testing.Short() {
		t.Skip("encodes the whole corpus (~2 s); run without -short")
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(paths) != 18 {
		t.Fatalf("books: %v %v", paths, err)
	}
	total := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		total += len(encodeAll(t, TokenizerGPT2, string(b)))
	}
	if total != 3_213_664 {
		t.Errorf("raw books encode to %d GPT-2 tokens, reference tiktoken gives 3,213,664", total)
	}
}

// TestDefaultCorpusWorkersAgree checks on real books, where documents are cut
// into pieces, that the worker count does not change a byte of the output.
func TestDefaultCorpusWorkersAgree(t *testing.T) {
	defaultBooksDir(t)
	if testing.Short() {
		t.Skip("tokenizes the corpus twice with gpt2 (~5 s); run without -short")
	}
	var manifests [2][]byte
	for i, workers := range []int{1, 2} {
		cfg := DefaultConfig(TokenizerGPT2)
		cfg.Workers = workers
		out, _ := runOK(t, cfg)
		b, err := os.ReadFile(filepath.Join(out, shards.ManifestName))
		if err != nil {
			t.Fatal(err)
		}
		manifests[i] = b // lists every shard's sha256
	}
	if string(manifests[0]) != string(manifests[1]) {
		t.Errorf("1 and 2 workers wrote different output:\n%s\n%s", manifests[0], manifests[1])
	}
}

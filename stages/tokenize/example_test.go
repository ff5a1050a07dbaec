package tokenize_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"routebench/stages/tokenize"
	"routebench/stages/tokenize/shards"
)

// Tokenize a small user corpus, then read it back as the train and evaluate
// stages do. With the default corpus the configuration would be
// tokenize.DefaultConfig("bytes") after `make corpus`.
func Example() {
	dir, _ := os.MkdirTemp("", "tokenize-example")
	defer os.RemoveAll(dir)
	corpus := filepath.Join(dir, "corpus")
	os.MkdirAll(corpus, 0o755)
	os.WriteFile(filepath.Join(corpus, "train.txt"), []byte("The quick brown fox jumps over the lazy dog.\r\n"), 0o644)
	os.WriteFile(filepath.Join(corpus, "eval.txt"), []byte("Pack my box with five dozen liquor jugs.\n"), 0o644)

	cfg := tokenize.Config{
		Tokenizer:   "bytes",
		Corpus:      []string{corpus},
		HeldOut:     []string{"eval.txt"},
		ShardTokens: 1 << 20,
	}
	out := filepath.Join(dir, "shards")
	if err := tokenize.Run(context.Background(), cfg, out, nil); err != nil {
		fmt.Println(err)
		return
	}

	entries, _ := os.ReadDir(out)
	var paths []string
	for _, e := range entries {
		paths = append(paths, filepath.Join(out, e.Name()))
		fmt.Println(e.Name())
	}
	d, err := shards.Open(paths)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	info := d.Info()
	fmt.Println(info.Tokenizer, info.VocabSize, info.EOT, info.Splits["train"].Tokens, info.Splits["heldout"].Tokens)

	inputs, targets, _ := d.TrainBatch(1, 0, 2, 8) // seed, step, batch, T
	// The bytes tokenizer's id is the byte.
	text := func(ids []int32) string {
		b := make([]byte, len(ids))
		for i, id := range ids {
			b[i] = byte(id)
		}
		return string(b)
	}
	fmt.Printf("%d tokens; row 0 %q, targets %q\n", len(inputs), text(inputs[:8]), text(targets[:8]))
	windows, _ := d.EvalWindows(1, 16, 3) // seed, L, n
	fmt.Println(len(windows), len(windows[0]))
	// Output:
	// heldout-00000.arrow
	// manifest.json
	// train-00000.arrow
	// bytes 257 256 46 42
	// 16 tokens; row 0 "the lazy", targets "he lazy "
	// 3 17
}

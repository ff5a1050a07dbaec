package shards_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"routebench/stages/tokenize"
)

// The reader's tests read what the writer writes: they make their shards
// with tokenize.Run (an external test package may import the writer; the
// reader itself never does).

// smallCorpus writes n short .txt documents of different lengths.
func smallCorpus(t testing.TB, n int) string {
	dir := filepath.Join(t.TempDir(), "books")
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("doc%02d.txt", i)] = strings.Repeat(fmt.Sprintf("Document %d says hello to the world. ", i), 5+i)
	}
	writeFiles(t, dir, files)
	return dir
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runOK runs cfg into a fresh directory and returns the output paths
// (shards and manifest), sorted.
func runOK(t testing.TB, cfg tokenize.Config) (string, []string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	if err := tokenize.Run(context.Background(), cfg, out, nil); err != nil {
		t.Fatalf("Run: %v", err)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range ents {
		paths = append(paths, filepath.Join(out, e.Name()))
	}
	sort.Strings(paths)
	return out, paths
}

// testConfig is a small user-corpus configuration.
func testConfig(tokenizer string, corpus ...string) tokenize.Config {
	return tokenize.Config{Tokenizer: tokenizer, Corpus: corpus, ValFraction: 0.5, Seed: 1, ShardTokens: 64, Workers: 2}
}

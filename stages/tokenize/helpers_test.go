package tokenize

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"routebench/internal/corpustest"
)

// defaultBooksDir is the fetched default corpus (a missing one skips the
// test, or fails it under CI: corpustest.Missing).
func defaultBooksDir(t testing.TB) string {
	t.Helper()
	cache, err := Config{}.cacheDir()
	if err != nil {
		corpustest.Missing(t, err)
	}
	dir := filepath.Join(cache, defaultCorpusSubdir, "package", "gutenberg")
	if _, err := os.Stat(filepath.Join(cache, defaultCorpusSubdir, ".verified")); err != nil {
		corpustest.Missing(t, err)
	}
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
func runOK(t testing.TB, cfg Config) (string, []string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	if err := Run(context.Background(), cfg, out, nil); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out, listDir(t, out)
}

func listDir(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range ents {
		paths = append(paths, filepath.Join(dir, e.Name()))
	}
	sort.Strings(paths)
	return paths
}

// testConfig is a small user-corpus configuration.
func testConfig(tokenizer string, corpus ...string) Config {
	return Config{Tokenizer: tokenizer, Corpus: corpus, ValFraction: 0.5, Seed: 1, ShardTokens: 64, Workers: 2}
}

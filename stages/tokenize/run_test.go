package tokenize

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"routebench/stages/tokenize/shards"
)

// smallCorpus writes n .txt documents of a few hundred bytes each.
func smallCorpus(t testing.TB, n int) string {
	dir := filepath.Join(t.TempDir(), "books")
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("doc%02d.txt", i)] = strings.Repeat(fmt.Sprintf("Document %d says hello to the world. ", i), 5+i)
	}
	writeFiles(t, dir, files)
	return dir
}

func TestRunDeterministicAcrossWorkers(t *testing.T) {
	corpus := smallCorpus(t, 12)
	for _, tokName := range []string{TokenizerBytes, TokenizerGPT2} {
		cfg := testConfig(tokName, corpus)
		cfg.Workers = 1
		out1, files1 := runOK(t, cfg)
		cfg.Workers = 3
		out2, files2 := runOK(t, cfg)
		if len(files1) < 3 {
			t.Fatalf("%s: want several shards and a manifest, got %v", tokName, files1)
		}
		for i := range files1 {
			a, _ := os.ReadFile(files1[i])
			b, _ := os.ReadFile(files2[i])
			if filepath.Base(files1[i]) != filepath.Base(files2[i]) || !bytes.Equal(a, b) {
				t.Errorf("%s: %s differs between runs (1 vs 3 workers)", tokName, filepath.Base(files1[i]))
			}
		}
		if entries, _ := os.ReadDir(out1); len(entries) != len(files1) || len(listDir(t, out2)) != len(files2) {
			t.Errorf("temporary files left behind")
		}
	}
}

func TestRunRoundTripBytes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	writeFiles(t, dir, map[string]string{
		"a.txt":         "first document\r\nline two",
		"b.txt":         "C\xe6sar", // Latin-1
		"sub/c.txt":     "third",
		".hidden/x.txt": "never read",
		"empty.txt":     "",
		"notes.md":      "ignored: not a corpus file type",
	})
	cfg := testConfig(TokenizerBytes, dir)
	cfg.ValFraction, cfg.HeldOut, cfg.ShardTokens = 0, []string{"b"}, 8
	out, paths := runOK(t, cfg)
	d, err := shards.Open(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	info := d.Info()
	if info.Tokenizer != "bytes" || info.VocabSize != 257 || info.EOT != 256 || info.TokenType != "uint16" {
		t.Errorf("info %+v", info)
	}
	train, _ := d.Tokens(shards.SplitTrain)
	held, _ := d.Tokens(shards.SplitHeldOut)
	got := func(tk *shards.Tokens) string {
		var b strings.Builder
		for i := int64(0); i < tk.Len(); i++ {
			if v := tk.At(i); v == 256 {
				b.WriteString("|")
			} else {
				b.WriteByte(byte(v))
			}
		}
		return b.String()
	}
	if g := got(train); g != "first document\nline two|third|" {
		t.Errorf("train stream %q", g)
	}
	if g := got(held); g != "C\xc3\xa6sar|" {
		t.Errorf("held-out stream %q", g)
	}
	docs, err := d.Documents(shards.SplitTrain)
	if err != nil {
		t.Fatal(err)
	}
	want := []shards.Document{{ID: "c/a.txt", Start: 0, Tokens: 24, Norm: "crlf"}, {ID: "c/sub/c.txt", Start: 24, Tokens: 6}}
	if !slices.Equal(docs, want) {
		t.Errorf("documents %+v, want %+v", docs, want)
	}
	if hd, _ := d.Documents(shards.SplitHeldOut); len(hd) != 1 || hd[0].Norm != "latin1" {
		t.Errorf("held-out documents %+v", hd)
	}
	if s := info.Splits[shards.SplitTrain]; s.Tokens != 30 || s.Documents != 2 || s.Shards != 4 {
		t.Errorf("train split %+v", s)
	}
	var m shards.Manifest
	b, _ := os.ReadFile(filepath.Join(out, shards.ManifestName))
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.SkippedEmpty != 1 || m.Normalised["latin1"] != 1 || m.Normalised["crlf"] != 1 || m.HeldOutFiles["b.txt"] != 7 || m.InputFiles != 4 {
		t.Errorf("manifest %s", b)
	}
}

func TestRunProgress(t *testing.T) {
	corpus := smallCorpus(t, 3)
	var calls []int64
	var total int64
	err := Run(context.Background(), testConfig(TokenizerBytes, corpus), t.TempDir(), func(done, tot int64, note string) {
		calls = append(calls, done)
		total = tot
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 || calls[len(calls)-1] != total || total == 0 {
		t.Errorf("progress calls %v total %d", calls, total)
	}
}

func TestValFractionSplitIsSeededAndWhole(t *testing.T) {
	corpus := smallCorpus(t, 40)
	cfg := testConfig(TokenizerBytes, corpus)
	cfg.ValFraction = 0.25
	heldIDs := func(seed uint64) []string {
		cfg.Seed = seed
		_, paths := runOK(t, cfg)
		d, err := shards.Open(paths)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		docs, _ := d.Documents(shards.SplitHeldOut)
		train, _ := d.Documents(shards.SplitTrain)
		if len(docs)+len(train) != 40 {
			t.Fatalf("documents %d+%d, want 40", len(docs), len(train))
		}
		var ids []string
		for _, doc := range docs {
			ids = append(ids, doc.ID)
		}
		return ids
	}
	a, b, c := heldIDs(1), heldIDs(1), heldIDs(2)
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different held-out documents: %v vs %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 hold out the same documents %v", a)
	}
	if len(a) < 3 || len(a) > 20 {
		t.Errorf("fraction 0.25 of 40 held out %d documents", len(a))
	}
}

func TestRunErrors(t *testing.T) {
	tmp := t.TempDir()
	writeFiles(t, tmp, map[string]string{
		"empty/x.txt":   "",
		"bin/a.txt":     "looks fine\x00\x01\x02",
		"short/a.txt":   "tiny",
		"short/b.txt":   strings.Repeat("long enough text ", 20),
		"notes/read.md": "x",
		"odd.csv":       "a,b",
	})
	cases := []struct {
		name string
		cfg  func(c *Config)
		want []string
	}{
		{"empty corpus", func(c *Config) { c.Corpus = []string{filepath.Join(tmp, "empty")} }, []string{"no text", "x.txt"}},
		{"no files", func(c *Config) { c.Corpus = []string{filepath.Join(tmp, "notes")} }, []string{"notes holds no", ".txt"}},
		{"glob matches nothing", func(c *Config) { c.Corpus = []string{filepath.Join(tmp, "*.parquet")} }, []string{"matches no"}},
		{"missing path", func(c *Config) { c.Corpus = []string{filepath.Join(tmp, "nope")} }, []string{"nope", "no such file"}},
		{"unsupported file", func(c *Config) { c.Corpus = []string{filepath.Join(tmp, "odd.csv")} }, []string{"odd.csv", "unsupported", ".parquet"}},
		{"binary", func(c *Config) { c.Corpus = []string{filepath.Join(tmp, "bin")} }, []string{"bin/a.txt", "NUL byte at offset 10"}},
		{"held-out split empty", func(c *Config) {
			c.Corpus, c.ValFraction = []string{filepath.Join(tmp, "short")}, 1e-9
		}, []string{"held-out split is empty", "none of 2 documents", "raise ValFraction"}},
		{"everything held out", func(c *Config) {
			c.Corpus, c.HeldOut = []string{filepath.Join(tmp, "short", "a.txt")}, []string{"a"}
		}, []string{"nothing is left to train on"}},
		{"unknown held-out name", func(c *Config) {
			c.Corpus, c.HeldOut = []string{filepath.Join(tmp, "short")}, []string{"emma"}
		}, []string{`"emma" is not in the corpus`, "a.txt, b.txt"}},
		{"no split rule", func(c *Config) { c.ValFraction = 0 }, []string{"no held-out split"}},
		{"default corpus missing", func(c *Config) { c.Corpus, c.CacheDir = nil, filepath.Join(tmp, "nocache") }, []string{"make corpus", "scripts/fetch-corpus.sh"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(TokenizerBytes, filepath.Join(tmp, "short"))
			cfg.ValFraction = 0.5
			c.cfg(&cfg)
			out := filepath.Join(t.TempDir(), "out")
			err := Run(context.Background(), cfg, out, nil)
			if err == nil {
				t.Fatal("Run succeeded")
			}
			t.Log(err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Errorf("output left behind after an error: %v", ents)
			}
		})
	}
}

func TestRunRefusesUsedOutputDir(t *testing.T) {
	cfg := testConfig(TokenizerBytes, smallCorpus(t, 4))
	out, _ := runOK(t, cfg)
	if err := Run(context.Background(), cfg, out, nil); err == nil || !strings.Contains(err.Error(), "empty output directory") {
		t.Errorf("second Run into %s: %v", out, err)
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := t.TempDir()
	if err := Run(ctx, testConfig(TokenizerGPT2, smallCorpus(t, 20)), out, nil); err == nil {
		t.Fatal("cancelled Run succeeded")
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("cancelled Run left %v", ents)
	}
}

func TestFingerprint(t *testing.T) {
	corpus := smallCorpus(t, 3)
	cfg := testConfig(TokenizerBytes, corpus)
	a, err := Fingerprint(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Moving the corpus keeps the fingerprint (names are relative).
	moved := filepath.Join(t.TempDir(), "books")
	if err := os.Rename(corpus, moved); err != nil {
		t.Fatal(err)
	}
	if b, _ := Fingerprint(testConfig(TokenizerBytes, moved)); b != a {
		t.Errorf("fingerprint changed when the corpus moved")
	}
	writeFiles(t, moved, map[string]string{"doc00.txt": "changed"})
	if c, _ := Fingerprint(testConfig(TokenizerBytes, moved)); c == a {
		t.Errorf("fingerprint unchanged after a file changed")
	}
}

// TestKey: the key is the format, the output-relevant fields of Config and
// the input fingerprint, in one JSON form; what does not change the output
// does not change it, and manifest.json records it as hashed.
func TestKey(t *testing.T) {
	corpus := smallCorpus(t, 3)
	keyJSON := func(cfg Config) string {
		t.Helper()
		k, err := NewKey(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(k)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	base := keyJSON(testConfig(TokenizerBytes, corpus))
	var fields map[string]any
	if err := json.Unmarshal([]byte(base), &fields); err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(maps.Keys(fields))
	if want := []string{"format", "held_out", "inputs", "seed", "shard_tokens", "tokenizer", "val_fraction"}; !slices.Equal(names, want) || fields["format"] != shards.FormatVersion {
		t.Errorf("key %s: fields %v, want %v with format %s", base, names, want, shards.FormatVersion)
	}
	if again := keyJSON(testConfig(TokenizerBytes, corpus)); again != base {
		t.Errorf("key not deterministic:\n%s\n%s", base, again)
	}

	moved := filepath.Join(t.TempDir(), "books")
	if err := os.CopyFS(moved, os.DirFS(corpus)); err != nil {
		t.Fatal(err)
	}
	same := map[string]func(c *Config){
		"workers":             func(c *Config) { c.Workers = 7 },
		"cache dir":           func(c *Config) { c.CacheDir = "/elsewhere" },
		"moved corpus":        func(c *Config) { c.Corpus = []string{moved} },
		"empty held-out list": func(c *Config) { c.HeldOut = []string{} },
	}
	differ := map[string]func(c *Config){
		"tokenizer":    func(c *Config) { c.Tokenizer = TokenizerGPT2 },
		"held out":     func(c *Config) { c.HeldOut = []string{"doc01"} },
		"val fraction": func(c *Config) { c.ValFraction = 0.25 },
		"seed":         func(c *Config) { c.Seed = 2 },
		"shard tokens": func(c *Config) { c.ShardTokens = 32 },
		"fewer files":  func(c *Config) { c.Corpus = []string{filepath.Join(corpus, "doc0[01].txt")} },
	}
	for name, change := range same {
		cfg := testConfig(TokenizerBytes, corpus)
		change(&cfg)
		if k := keyJSON(cfg); k != base {
			t.Errorf("%s changed the key:\n%s\n%s", name, base, k)
		}
	}
	for name, change := range differ {
		cfg := testConfig(TokenizerBytes, corpus)
		change(&cfg)
		if keyJSON(cfg) == base {
			t.Errorf("%s did not change the key", name)
		}
	}
	// The same file named directly or by a glob: same name and bytes, but
	// another source description in the shards, so another key.
	one := testConfig(TokenizerBytes, filepath.Join(corpus, "doc00.txt"))
	glob := testConfig(TokenizerBytes, filepath.Join(corpus, "doc00.tx?"))
	if keyJSON(one) == keyJSON(glob) {
		t.Errorf("a file and a glob selecting it have one key, but the shards record different sources")
	}

	cfg := testConfig(TokenizerBytes, corpus)
	_, paths := runOK(t, cfg)
	d, err := shards.Open(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	recorded, err := json.Marshal(d.Manifest().Config)
	if err != nil {
		t.Fatal(err)
	}
	if string(recorded) != base {
		t.Errorf("manifest.json records the key\n%s\nbut the stage hashes\n%s", recorded, base)
	}
}

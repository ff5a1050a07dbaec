package shards_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"routebench/stages/tokenize"
	"routebench/stages/tokenize/shards"
)

// shardsOnly returns the output paths without the manifest, and the manifest.
func shardsOnly(paths []string) (shardFiles []string, manifest string) {
	for _, p := range paths {
		if filepath.Base(p) == shards.ManifestName {
			manifest = p
		} else {
			shardFiles = append(shardFiles, p)
		}
	}
	return shardFiles, manifest
}

// blobCopies copies files to extension-less names, as the artifact store does.
func blobCopies(t *testing.T, paths []string) []string {
	dir := t.TempDir()
	var out []string
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		q := filepath.Join(dir, strings.Repeat("ab", 4)+string(rune('a'+i)))
		if err := os.WriteFile(q, b, 0o444); err != nil {
			t.Fatal(err)
		}
		out = append(out, q)
	}
	return out
}

func TestOpenChecksAndZeroCopy(t *testing.T) {
	corpus := smallCorpus(t, 10)
	cfg := testConfig(tokenize.TokenizerGPT2, corpus)
	cfg.ShardTokens = 50
	_, paths := runOK(t, cfg)
	shardFiles, manifest := shardsOnly(paths)
	blobs := blobCopies(t, paths)
	slices.Reverse(blobs) // order and names must not matter
	d, err := shards.Open(blobs)
	if err != nil {
		t.Fatal(err)
	}
	info := d.Info()
	if info.Tokenizer != "gpt2" || info.VocabSize != 50257 || info.EOT != 50256 || d.Manifest() == nil {
		t.Errorf("info %+v", info)
	}
	tr, _ := d.Tokens(shards.SplitTrain)
	if tr.Len() != info.Splits[shards.SplitTrain].Tokens || info.Splits[shards.SplitTrain].Shards < 2 {
		t.Errorf("train %d tokens, info %+v", tr.Len(), info.Splits[shards.SplitTrain])
	}
	// Zero copy: the token slices point into the file mappings.
	inMap := shards.ViewsOfMappings(d)
	if !inMap {
		t.Errorf("token slices are not views of the mapped files")
	}
	// Every document ends with EOT at the offset the metadata gives.
	docs, _ := d.Documents(shards.SplitTrain)
	for _, doc := range docs {
		if tr.At(doc.Start+doc.Tokens-1) != 50256 {
			t.Errorf("document %s does not end with EOT", doc.ID)
		}
	}
	d.Close()

	mustFail := func(name string, paths []string, want string) {
		t.Helper()
		d, err := shards.Open(paths)
		if err == nil {
			d.Close()
			t.Errorf("%s: shards.Open succeeded", name)
			return
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not mention %q", name, err, want)
		}
	}
	var train []string
	for _, s := range shardFiles {
		if strings.HasPrefix(filepath.Base(s), shards.SplitTrain) {
			train = append(train, s)
		}
	}
	mustFail("missing last shard", train[:len(train)-1], "a shard is missing")
	mustFail("missing middle shard", append([]string{train[0]}, train[2:]...), "shard 1 is missing")
	mustFail("duplicate", append([]string{train[0]}, train...), "given twice")
	mustFail("manifest without a split", append(train, manifest), `split "heldout": the manifest.json lists`)
	mustFail("not a shard", []string{filepath.Join(corpus, "doc00.txt")}, "neither a token shard")
	mustFail("nothing", nil, "no shard files")

	other := testConfig(tokenize.TokenizerGPT2, corpus)
	other.ShardTokens = 70
	_, otherPaths := runOK(t, other)
	otherShards, _ := shardsOnly(otherPaths)
	mustFail("mixed runs", append([]string{otherShards[0]}, shardFiles...), "different tokenize runs")

	// Only the held-out shards: enough for evaluation.
	var held []string
	for _, s := range shardFiles {
		if strings.HasPrefix(filepath.Base(s), shards.SplitHeldOut) {
			held = append(held, s)
		}
	}
	d, err = shards.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.EvalWindows(1, 8, 2); err != nil {
		t.Error(err)
	}
	if _, _, err := d.TrainBatch(1, 0, 2, 8); err == nil || !strings.Contains(err.Error(), `split "train" is not among the opened shards`) {
		t.Errorf("TrainBatch without train shards: %v", err)
	}
}

func TestBatchesAndWindows(t *testing.T) {
	cfg := testConfig(tokenize.TokenizerBytes, smallCorpus(t, 10))
	cfg.ShardTokens = 100 // batches cross shard boundaries
	_, paths := runOK(t, cfg)
	d, err := shards.Open(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tr, _ := d.Tokens(shards.SplitTrain)
	all := make([]int32, tr.Len())
	if err := tr.Read(all, 0); err != nil {
		t.Fatal(err)
	}

	const B, T = 4, 33
	in1, tg1, err := d.TrainBatch(7, 3, B, T)
	if err != nil {
		t.Fatal(err)
	}
	in2, tg2, _ := d.TrainBatch(7, 3, B, T)
	in3, _, _ := d.TrainBatch(7, 4, B, T)
	if !slices.Equal(in1, in2) || !slices.Equal(tg1, tg2) {
		t.Errorf("same (seed, step) gave different batches")
	}
	if slices.Equal(in1, in3) {
		t.Errorf("steps 3 and 4 gave the same batch")
	}
	if len(in1) != B*T || len(tg1) != B*T {
		t.Fatalf("batch sizes %d %d", len(in1), len(tg1))
	}
	for b := range B {
		row, trow := in1[b*T:(b+1)*T], tg1[b*T:(b+1)*T]
		if !slices.Equal(row[1:], trow[:T-1]) {
			t.Errorf("row %d: targets are not the inputs shifted by one", b)
		}
		// The row is a contiguous piece of the train stream.
		found := false
		for off := 0; off+T+1 <= len(all); off++ {
			if slices.Equal(all[off:off+T], row) && all[off+T] == trow[T-1] {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("row %d is not a window of the train stream", b)
		}
	}

	w1, err := d.EvalWindows(11, 16, 5)
	if err != nil {
		t.Fatal(err)
	}
	w2, _ := d.EvalWindows(11, 16, 8)
	for i := range w1 {
		if len(w1[i]) != 17 || !slices.Equal(w1[i], w2[i]) {
			t.Errorf("window %d: not stable when asking for more windows", i)
		}
	}
	held, _ := d.Tokens(shards.SplitHeldOut)
	if _, err := d.EvalWindows(11, int(held.Len()), 1); err == nil || !strings.Contains(err.Error(), "needs") {
		t.Errorf("window as long as the held-out stream: %v", err)
	}
	if _, err := d.EvalWindows(11, int(held.Len())-1, 1); err != nil {
		t.Errorf("window of held-out length - 1: %v", err)
	}
}

func TestEvalWindowsInDocuments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	writeFiles(t, dir, map[string]string{
		"train.txt": strings.Repeat("t", 50),
		"held1.txt": strings.Repeat("a", 30),
		"held2.txt": strings.Repeat("b", 10), // too short for L=20: never used
		"held3.txt": strings.Repeat("c", 25),
	})
	cfg := testConfig(tokenize.TokenizerBytes, dir)
	cfg.HeldOut, cfg.ShardTokens = []string{"held1", "held2", "held3"}, 16
	_, paths := runOK(t, cfg)
	d, err := shards.Open(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ws, err := d.EvalWindowsInDocuments(3, 20, 200)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]bool{}
	for _, w := range ws {
		if len(w) != 21 {
			t.Fatalf("window of %d tokens", len(w))
		}
		// One document per window: a single letter, at most a final EOT.
		for i, v := range w {
			if v == 256 && i != len(w)-1 || v != 256 && v != w[0] {
				t.Fatalf("window spans documents: %v", w)
			}
		}
		seen[w[0]] = true
	}
	if !seen['a'] || !seen['c'] || len(seen) != 2 {
		t.Errorf("windows drawn from documents %v, want a and c", seen)
	}
	again, _ := d.EvalWindowsInDocuments(3, 20, 200)
	if !slices.EqualFunc(ws, again, slices.Equal) {
		t.Errorf("not deterministic")
	}
	if _, err := d.EvalWindowsInDocuments(3, 40, 1); err == nil || !strings.Contains(err.Error(), "longest: 31") {
		t.Errorf("too long a window: %v", err)
	}
}

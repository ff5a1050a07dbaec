package tokenize

import (
	"slices"
	"testing"

	"routebench/stages/tokenize/shards"
)

// The int32 storage path: no tokenizer here has a vocabulary above 65536,
// so write shards directly with a made-up one.
func TestInt32Shards(t *testing.T) {
	dir := t.TempDir()
	common := shards.DatasetMeta{Format: shards.FormatVersion, Dataset: "test", Tokenizer: "big", VocabSize: 70_000, EOT: 69_999,
		TokenType: "int32", Source: "test", Normalisation: normalisationRule, SplitRule: "test"}
	for _, split := range []string{shards.SplitTrain, shards.SplitHeldOut} {
		w := newSplitWriter(dir, split, common, 3)
		if err := w.add([]uint32{1, 66_000, 5, 69_998, 69_999}); err != nil {
			t.Fatal(err)
		}
		w.endDoc(shards.DocEntry{ID: "d", Start: 0, Tokens: 5})
		if err := w.finish(); err != nil {
			t.Fatal(err)
		}
	}
	d, err := shards.Open(listDir(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tr, _ := d.Tokens(shards.SplitTrain)
	got := make([]int32, tr.Len())
	if err := tr.Read(got, 0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int32{1, 66_000, 5, 69_998, 69_999}) || tr.Uint16Parts() != nil || len(tr.Int32Parts()) != 2 {
		t.Errorf("int32 stream %v, parts %d", got, len(tr.Int32Parts()))
	}
	if info := d.Info(); info.TokenType != "int32" || info.Splits[shards.SplitTrain].Shards != 2 || info.Splits[shards.SplitTrain].Documents != 1 {
		t.Errorf("info %+v", info)
	}
}

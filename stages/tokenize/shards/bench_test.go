package shards_test

import (
	"testing"

	"routebench/stages/tokenize"
	"routebench/stages/tokenize/shards"
)

// BenchmarkTrainBatch is the reader's cost per training batch (cpu profile
// shape: 32 x 128 tokens).
func BenchmarkTrainBatch(b *testing.B) {
	cfg := testConfig(tokenize.TokenizerBytes, smallCorpus(b, 40))
	cfg.ShardTokens = 1 << 12
	_, paths := runOK(b, cfg)
	d, err := shards.Open(paths)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	step := 0
	for b.Loop() {
		if _, _, err := d.TrainBatch(1, step, 32, 128); err != nil {
			b.Fatal(err)
		}
		step++
	}
}

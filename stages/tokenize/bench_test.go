package tokenize

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"routebench/internal/procstat"
	"routebench/stages/tokenize/shards"
)

// Benchmarks. Run them alone, e.g.
//
//	go test -run '^$' -bench . -benchtime 3x ./stages/tokenize/
//
// The corpus benchmarks skip when the default corpus is not fetched.

// benchText is ~1 MiB of real prose (two books) or, without the corpus,
// synthetic text.
func benchText(b *testing.B) string {
	b.Helper()
	cache, err := Config{}.cacheDir()
	if err == nil {
		dir := filepath.Join(cache, defaultCorpusSubdir, "package", "gutenberg")
		var parts []string
		for _, name := range []string{"austen-emma.txt", "carroll-alice.txt"} {
			raw, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				parts = nil
				break
			}
			text, _ := normalize(raw)
			parts = append(parts, string(text))
		}
		if parts != nil {
			return strings.Join(parts, "\n")
		}
	}
	return strings.Repeat("It was the best of times, it was the worst of times; 1859.\n", 1<<14)
}

// BenchmarkEncode is one goroutine's encoder throughput on ~1 MiB of prose,
// no I/O.
func BenchmarkEncode(b *testing.B) {
	text := benchText(b)
	for _, name := range []string{TokenizerBytes, TokenizerGPT2} {
		b.Run(name, func(b *testing.B) {
			tok, _ := newTokenizer(name)
			b.SetBytes(int64(len(text)))
			dst := make([]uint32, 0, len(text))
			var n int
			for b.Loop() {
				// A fresh encoder each time: the GPT-2 piece cache starts
				// empty, as in a Run.
				enc, err := tok.newEncoder()
				if err != nil {
					b.Fatal(err)
				}
				dst, err = enc(dst[:0], text)
				if err != nil {
					b.Fatal(err)
				}
				n = len(dst)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkDefaultCorpus is Run end to end on the 18 Gutenberg books
// (read, normalise, split, tokenize, write shards and manifest) with 1 and 2
// workers. MB/s counts input bytes; peak-RSS-MB is the process's high-water
// mark (run one sub-benchmark at a time to attribute it).
func BenchmarkDefaultCorpus(b *testing.B) {
	defaultBooksDir(b)
	for _, name := range []string{TokenizerBytes, TokenizerGPT2} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", name, workers), func(b *testing.B) {
				cfg := DefaultConfig(name)
				cfg.Workers = workers
				files, _, err := corpusFiles(cfg)
				if err != nil {
					b.Fatal(err)
				}
				var size int64
				for _, f := range files {
					size += f.size
				}
				b.SetBytes(size)
				b.ReportAllocs()
				var tokens int64
				i := 0
				cpu0 := procstat.CPUSeconds()
				for b.Loop() {
					out := filepath.Join(b.TempDir(), fmt.Sprint(i))
					i++
					if err := Run(context.Background(), cfg, out, nil); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					d, err := shards.Open(listDir(b, out))
					if err != nil {
						b.Fatal(err)
					}
					info := d.Info()
					tokens = info.Splits[shards.SplitTrain].Tokens + info.Splits[shards.SplitHeldOut].Tokens
					d.Close()
					os.RemoveAll(out)
					b.StartTimer()
				}
				// CPU seconds include the untimed Open of the output (a few ms).
				b.ReportMetric((procstat.CPUSeconds()-cpu0)/float64(b.N), "cpu-s/run")
				b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
				b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(time.Second), "s/run")
				var ru syscall.Rusage
				if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
					b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
				}
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-sys-MB")
			})
		}
	}
}

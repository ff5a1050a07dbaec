package compare

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSummaryRatiosToThePeak(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run.txt")
	data := "commit: aaa\ncpu: test\n" +
		"BenchmarkSgemm/impl=openblas-2t/peak/2048x2048x2048-2 \t 10\t 1 ns/op\t 300 GFLOP/s\n" +
		"BenchmarkSgemm/impl=openblas-2t/peak/2048x2048x2048-2 \t 10\t 1 ns/op\t 400 GFLOP/s\n" +
		"BenchmarkSgemm/impl=openblas-2t/peak/2048x2048x2048-2 \t 10\t 1 ns/op\t 350 GFLOP/s\n" +
		"BenchmarkTrainProtocol/variant=rope-2 \t 3\t 1 ns/op\t 70 GFLOP/s\n" +
		"BenchmarkTrainProtocol/variant=rope-2 \t 3\t 1 ns/op\t 140 GFLOP/s\n" +
		"BenchmarkTrainProtocol/variant=rope-2 \t 3\t 1 ns/op\t 100 GFLOP/s\n" +
		"BenchmarkOther-2 \t 3\t 1 ns/op\n" +
		"BenchmarkTrainProtocol/variant=random-qkv \t 3\t 1 ns/op\t 35 GFLOP/s\n"
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Summary(&out, p); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	// rope: median of 70, 100, 140 is 100; 100 / 350 = 0.286.
	for _, want := range []string{"(350.0)", "TrainProtocol/variant=rope", "100.0", "70.0", "140.0", "0.286", "1.000"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	// Without a GOMAXPROCS suffix, the name's own last dash stays.
	if !strings.Contains(s, "variant=random-qkv ") || !strings.Contains(s, "0.100") {
		t.Errorf("summary lost the row without a -N suffix (or its ratio 35/350):\n%s", s)
	}
	if strings.Contains(s, "Other") || strings.Contains(s, "rope-2") {
		t.Errorf("summary lists a row without GFLOP/s or keeps the -2 suffix:\n%s", s)
	}
}

func TestSummaryNeedsThePeak(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run.txt")
	os.WriteFile(p, []byte("BenchmarkTrainProtocol/variant=rope-2 \t 3\t 1 ns/op\t 70 GFLOP/s\n"), 0o644)
	if err := Summary(&bytes.Buffer{}, p); err == nil || !strings.Contains(err.Error(), PeakRow) || !strings.Contains(err.Error(), "openblas") {
		t.Fatalf("got %v", err)
	}
}

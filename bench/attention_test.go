package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"routebench/internal/procstat"
	"routebench/model/native"
	"routebench/model/nativeeval"
	"routebench/stages/kernelspeed"
)

// Shapes of the cpu profile (d_model 128, 4 heads of 32).
const (
	benchHeads = 4
	benchDHead = 32
)

// gemmPeak is the yardstick for "fraction of peak", the kernelspeed
// stage's (kernelspeed.PeakProduct), measured once per process: the best
// of three products, so that the reference is the machine's, not a noisy
// second's.
var gemmPeak = sync.OnceValue(func() float64 {
	product, flops := kernelspeed.PeakProduct()
	product() // warm
	best := 0.0
	for range 3 {
		t0 := time.Now()
		product()
		best = max(best, flops/time.Since(t0).Seconds()/1e9)
	}
	return best
})

var benchLengths = []int{256, 1024, 4096}

// attnVariants are the attention flavours that cost differently (learned-*
// run exactly the random-* code).
var attnVariants = []struct {
	name     string
	rotation string
	valueRot bool
	alibi    bool
}{
	{"nope", "none", false, false},
	{"rope", "rope", false, false},
	{"alibi", "none", false, true},
	{"random-qk", "accumulated", false, false},
	{"random-qkv", "accumulated", true, false},
}

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// reportAttention adds the derived metrics: GFLOP/s by the causal count
// (4 L^2/2 d per head), tokens/s, % of gemmPeak, and GFLOP per
// CPU-second of this process. The machine is shared: when other jobs take
// CPU, wall-clock rates drop while the per-CPU-second rate stays put, so
// the latter times the core count estimates the uncontended rate.
func reportAttention(b *testing.B, flops float64, L int, cpu0 float64) {
	cpu := procstat.CPUSeconds() - cpu0
	sec := b.Elapsed().Seconds() / float64(b.N)
	gf := flops / sec / 1e9
	b.ReportMetric(gf, "GFLOP/s")
	b.ReportMetric(float64(L)/sec, "tokens/s")
	b.ReportMetric(100*gf/gemmPeak(), "%peak")
	if cpu > 0 {
		b.ReportMetric(flops*float64(b.N)/cpu/1e9, "GFLOP/cpu-s")
	}
}

func BenchmarkAttention(b *testing.B) {
	b.Logf("native kernels: %s; peak (native GEMM, 2048^3): %.1f GFLOP/s", native.KernelName(), gemmPeak())
	for _, v := range attnVariants {
		for _, L := range benchLengths {
			b.Run(fmt.Sprintf("variant=%s/L=%d", v.name, L), func(b *testing.B) { benchAttention(b, v.rotation, v.valueRot, v.alibi, L) })
		}
	}
}

// longEnv opts into BenchmarkAttentionLong: ~4 s an iteration (1.1 TFLOP
// a head set), too long for `make bench`'s ten repetitions of every
// benchmark; `make bench-speed` sets it and runs one iteration.
const longEnv = "ROUTEBENCH_LONG_ATTENTION"

// BenchmarkAttentionLong is BenchmarkAttention at L = 65,536 (the cpu
// profile's longest evaluation window) for rope and random-qkv.
//
//	ROUTEBENCH_LONG_ATTENTION=1 go test -tags noxla -run '^$' -bench AttentionLong -benchtime 1x ./bench/
func BenchmarkAttentionLong(b *testing.B) {
	if os.Getenv(longEnv) == "" {
		b.Skipf("set %s=1 to run (about 4 s an iteration per variant)", longEnv)
	}
	b.Logf("peak (native GEMM, 2048^3): %.1f GFLOP/s", gemmPeak())
	for _, v := range attnVariants {
		if v.name != "rope" && v.name != "random-qkv" {
			continue
		}
		b.Run(fmt.Sprintf("variant=%s/L=%d", v.name, 65536), func(b *testing.B) { benchAttention(b, v.rotation, v.valueRot, v.alibi, 65536) })
	}
}

func benchAttention(b *testing.B, rotation string, valueRot, alibi bool, L int) {
	r := rand.New(rand.NewPCG(uint64(L), 1))
	spec := nativeeval.AttentionSpec{L: L, Heads: benchHeads, DHead: benchDHead, Rotation: rotation,
		RopeBase: 10000, ValueRot: valueRot, ALiBi: alibi}
	if rotation == "accumulated" {
		const V = 257
		spec.Angles = randFloats(r, V*benchHeads*benchDHead/2)
		spec.Tokens = make([]int32, L)
		for i := range spec.Tokens {
			spec.Tokens[i] = int32(r.IntN(V))
		}
	}
	a, err := nativeeval.NewAttention(spec)
	if err != nil {
		b.Fatal(err)
	}
	D := benchHeads * benchDHead
	qkv, out := randFloats(r, L*3*D), make([]float32, L*D)
	if L < 65536 { // at 65,536 one run is seconds: page faults are noise, a warm-up doubles the cost
		a.Run(out, qkv, 0) // warm caches and the page tables of out
	}
	b.ResetTimer()
	cpu0 := procstat.CPUSeconds()
	for b.Loop() {
		a.Run(out, qkv, 0)
	}
	reportAttention(b, a.FLOPs(), L, cpu0)
}

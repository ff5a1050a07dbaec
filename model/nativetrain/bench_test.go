package nativetrain_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"

	"testing"

	"routebench/internal/procstat"
	"routebench/model"
	"routebench/model/native"
	"routebench/model/nativetrain"
	"routebench/modelspec"
)

// BenchmarkStepShapes times AdamW steps of the native trainer over the
// shapes the next cpu profile is sized from: d_model {128, 256} (head dim
// 32, d_hidden 4 d_model) x layers {2, 4} x T {128, 256, 512} at 2,048 and
// 8,192 tokens a step, for rope and random-qkv. Metrics: s/step (wall),
// cpu-s/step (user+system time of the process: the steadier cost on a
// shared machine), tokens/s, GFLOP/s (model.FlopsPerStep, matmul FLOPs),
// peak-RSS-MB (the process's resident high-water mark, reset before each
// shape, after returning the earlier shapes' memory to the OS) and heap-MB
// (the live Go heap after the steps: the trainer's arena keeps a step's
// buffers, so this is the step's working set). Run with
// BenchmarkGemmPeak in one process so that GFLOP/s / peak is one run's ratio:
//
//	go test -tags noxla -run '^$' -bench 'StepShapes|GemmPeak' -benchtime 3x ./model/nativetrain/
func BenchmarkStepShapes(b *testing.B) {
	for _, v := range []string{"rope", "random-qkv"} {
		for _, D := range []int{128, 256} {
			for _, L := range []int{2, 4} {
				for _, T := range []int{128, 256, 512} {
					for _, tokens := range []int{2048, 8192} {
						name := fmt.Sprintf("%s/d=%d/L=%d/T=%d/tok=%d", v, D, L, T, tokens)
						b.Run(name, func(b *testing.B) { benchStep(b, v, D, L, T, tokens) })
					}
				}
			}
		}
	}
}

// BenchmarkStepProtocol times the paper protocol's training shape: d_model
// 128, 2 layers, 4 heads of 32, d_hidden 512, T = 512 x batch 8 (4,096
// tokens a step), for rope, random-qkv and path. Run it with -count and
// BenchmarkGemmPeak for same-run ratios:
//
//	go test -tags noxla -run '^$' -bench 'StepProtocol|GemmPeak' -benchtime 5x -count 5 ./model/nativetrain/
func BenchmarkStepProtocol(b *testing.B) {
	for _, v := range []string{"rope", "random-qkv", "path"} {
		b.Run(v, func(b *testing.B) { benchStep(b, v, 128, 2, 512, 4096) })
	}
}

func benchStep(b *testing.B, v string, D, L, T, tokens int) {
	c := nativetrain.TestConfig(v)
	c.DModel, c.Heads, c.DHidden, c.Layers = D, D/32, 4*D, L
	c.Context, c.Batch = T, tokens/T
	if err := c.Validate(); err != nil {
		b.Fatal(err)
	}
	procstat.ResetPeakRSS()
	tr := nativetrain.NewTestTrainer(b, c, 0)
	tok, tgt := nativetrain.TestBatch(c, c.Batch, 1)
	step := func(s int) {
		bc1 := 1 - float32(math.Pow(modelspec.AdamBeta1, float64(s)))
		bc2 := 1 - float32(math.Pow(modelspec.AdamBeta2, float64(s)))
		if _, _, err := tr.Step(1e-3, bc1, bc2, tok, tgt); err != nil {
			b.Fatal(err)
		}
	}
	step(1) // fills the arena and the packing pool
	stopProfile := startStepProfile(b)
	cpu0 := procstat.CPUSeconds()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step(2 + i)
	}
	b.StopTimer()
	stopProfile()
	sec := b.Elapsed().Seconds() / float64(b.N)
	cpu := (procstat.CPUSeconds() - cpu0) / float64(b.N)
	runtime.GC() // the live heap: earlier shapes' trainers are garbage
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(tr)
	b.ReportMetric(sec, "s/step")
	b.ReportMetric(cpu, "cpu-s/step")
	b.ReportMetric(float64(tokens)/sec, "tokens/s")
	b.ReportMetric(model.FlopsPerStep(c)/sec/1e9, "GFLOP/s")
	b.ReportMetric(float64(procstat.PeakRSS())/(1<<20), "peak-RSS-MB")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
}

// BenchmarkTrainProtocol times AdamW steps of every default variant
// (modelspec.DefaultVariants) at the protocol shape: d_model 128, 2 layers,
// 4 heads of 32, d_hidden 512, T 512, batch 8 (4,096 tokens a step). Its
// GFLOP/s (model.FlopsPerStep: matmul FLOPs, PaTH's transport not counted,
// so PaTH's figure reads as "RoPE-equivalent work per second") is what
// `make bench-speed` divides by the same run's OpenBLAS 2-thread peak.
//
//	go test -tags noxla -run '^$' -bench TrainProtocol -benchtime 3x ./model/nativetrain/
func BenchmarkTrainProtocol(b *testing.B) {
	for _, v := range modelspec.DefaultVariants() {
		b.Run("variant="+v, func(b *testing.B) { benchStep(b, v, 128, 2, 512, 4096) })
	}
}

// BenchmarkStepProfile is the step scripts/step-profile.sh profiles (make
// step-profile): d_model 128, 2 layers, 4 heads, at the cpu-v1 shape (T 128,
// batch 16) and the protocol shape (T 512, batch 8), for rope, random-qkv
// and path.
func BenchmarkStepProfile(b *testing.B) {
	for _, sh := range []struct {
		name      string
		T, tokens int
	}{{"cpu-v1", 128, 2048}, {"protocol", 512, 4096}} {
		for _, v := range []string{"rope", "random-qkv", "path"} {
			b.Run("shape="+sh.name+"/variant="+v, func(b *testing.B) { benchStep(b, v, 128, 2, sh.T, sh.tokens) })
		}
	}
}

// stepProfileEnv names a file for a CPU profile of the timed steps only
// (scripts/step-profile.sh): -test.cpuprofile would also take the trainer's
// construction and its first step, whose page faults on the fresh arena
// cost 5-6 steps' time (a third of a 30-step PaTH profile). Each run of a
// benchmark rewrites the file, so it ends with the last run's b.N steps.
const stepProfileEnv = "ROUTEBENCH_STEP_CPUPROFILE"

func startStepProfile(b *testing.B) (stop func()) {
	path := os.Getenv(stepProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatalf("%s: %v", stepProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatalf("%s: start the CPU profile into %s: %v", stepProfileEnv, path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatalf("%s: %v", stepProfileEnv, err)
		}
	}
}

// BenchmarkGemmPeak is the reference for the trainer's GFLOP/s: native.MatMul
// on large products, all cores (the kernel's own best big-GEMM figure).
func BenchmarkGemmPeak(b *testing.B) {
	for _, sz := range [][3]int{{2048, 512, 512}, {4096, 1024, 1024}} {
		m, k, n := sz[0], sz[1], sz[2]
		b.Run(fmt.Sprintf("%dx%dx%d", m, k, n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			a, bb, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
			for i := range a {
				a[i] = float32(r.NormFloat64())
			}
			for i := range bb {
				bb[i] = float32(r.NormFloat64())
			}
			native.MatMul(c, a, bb, m, k, n, false, false, false, 0)
			cpu0 := procstat.CPUSeconds()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				native.MatMul(c, a, bb, m, k, n, false, false, false, 0)
			}
			b.StopTimer()
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(2*float64(m)*float64(k)*float64(n)/sec/1e9, "GFLOP/s")
			b.ReportMetric((procstat.CPUSeconds()-cpu0)/float64(b.N), "cpu-s/op")
		})
	}
}

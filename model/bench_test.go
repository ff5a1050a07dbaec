package model

import (
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"routebench/internal/procstat"
	"routebench/modelspec"
)

// BenchmarkTrainStep times one optimizer step per variant at the cpu
// profile (d 128, 2 layers, 4 heads, T 128, batch 16, vocab 257), after a
// warm-up step that compiles the graph. Metrics: s/step, tokens/s,
// cpu-s/step (user+system CPU time of the process: the machine is shared,
// and CPU time is the steadier cost measure when others load it),
// GFLOP/s (FlopsPerStep: matmul FLOPs only), and peak-heap-MB, the largest
// Go heap in use sampled every 20 ms during the timed steps (simplego buffers
// live on the Go heap).
//
//	go test -tags noxla -run '^$' -bench TrainStep -benchtime 5x ./model/
//
// On a loaded machine, compare variants single-threaded, where CPU time is
// the work done:
//
//	ROUTEBENCH_BENCH_BACKEND=go:parallelism=0,dotgeneral_large GOMAXPROCS=1 go test ...
func BenchmarkTrainStep(b *testing.B) {
	for _, trainer := range benchTrainers() {
		for _, v := range modelspec.Variants() { // opt-in ones too: name them with -bench
			if vr, _ := modelspec.LookupVariant(v); trainer == modelspec.TrainerNative && !vr.NativeTrainer() {
				continue
			}
			b.Run(trainer+"/"+v, func(b *testing.B) { benchTrainStep(b, trainer, v) })
		}
	}
}

// benchTrainers is $ROUTEBENCH_BENCH_TRAINER (native or gomlx), else both.
func benchTrainers() []string {
	if t := os.Getenv("ROUTEBENCH_BENCH_TRAINER"); t != "" {
		return []string{t}
	}
	return []string{modelspec.TrainerNative, modelspec.TrainerGomlx}
}

func benchTrainStep(b *testing.B, trainer, v string) {
	{
		{
			c, tr, tok, tgt := compiledTrainer(b, trainer, v)
			defer tr.close()
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			var peak atomic.Uint64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				var ms runtime.MemStats
				for {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
					runtime.ReadMemStats(&ms)
					if ms.HeapInuse > peak.Load() {
						peak.Store(ms.HeapInuse)
					}
				}
			}()
			cpu0 := procstat.CPUSeconds()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := tr.runStep(1+i, tok, tgt); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cpu := (procstat.CPUSeconds() - cpu0) / float64(b.N)
			close(stop)
			wg.Wait()
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(sec, "s/step")
			b.ReportMetric(cpu, "cpu-s/step")
			b.ReportMetric(float64(c.Batch*c.Context)/sec, "tokens/s")
			b.ReportMetric(FlopsPerStep(c)/sec/1e9, "GFLOP/s")
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
		}
	}
}

// BenchmarkStepRatio measures all variants at the cpu profile in one
// process, round-robin (one step of each variant per round), so slow
// changes in the load of a shared machine hit every variant alike. Each
// round is one b.N iteration. Metrics: median wall seconds per step per
// variant, and the median over rounds of the paired ratio to rope's step
// in the same round, and the fastest step (the least-disturbed estimate
// on a loaded machine) (the goal for accumulated variants is <= 1.10).
//
//	go test -tags noxla -run '^$' -bench StepRatio -benchtime 5x ./model/
func BenchmarkStepRatio(b *testing.B) {
	for _, trainer := range benchTrainers() {
		b.Run(trainer, func(b *testing.B) { benchStepRatio(b, trainer) })
	}
}

func benchStepRatio(b *testing.B, trainer string) {
	type run struct {
		name   string
		tr     engine
		tok    []int32
		tgt    []int32
		step   int
		wall   []float64
		ratios []float64
	}
	var runs []*run
	for _, v := range modelspec.DefaultVariants() {
		_, tr, tok, tgt := compiledTrainer(b, trainer, v)
		defer tr.close()
		r := &run{name: v, tr: tr, tok: tok, tgt: tgt, step: 1}
		runs = append(runs, r)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, r := range runs {
			t0 := time.Now()
			if _, _, err := r.tr.runStep(r.step, r.tok, r.tgt); err != nil {
				b.Fatal(err)
			}
			r.step++
			r.wall = append(r.wall, time.Since(t0).Seconds())
		}
		rope := runs[1].wall[i]
		for _, r := range runs {
			r.ratios = append(r.ratios, r.wall[i]/rope)
		}
	}
	b.StopTimer()
	for _, r := range runs {
		b.ReportMetric(median(r.wall), r.name+"-s/step")
		b.ReportMetric(slices.Min(r.wall), r.name+"-min-s/step")
		b.ReportMetric(median(r.ratios), r.name+"/rope")
	}
}

// compiledTrainer builds variant v's trainer at the cpu profile (on
// $ROUTEBENCH_BENCH_BACKEND if set) with fresh parameters and zero Adam
// moments, and runs step 0 on the first batch, which compiles the graph.
// The caller closes the trainer.
func compiledTrainer(b *testing.B, trainer, v string) (c Config, tr engine, tok, tgt []int32) {
	b.Helper()
	c, err := shapeConfig("cpu", v, 257)
	if err != nil {
		b.Fatal(err)
	}
	c.Trainer = trainer
	if be := os.Getenv("ROUTEBENCH_BENCH_BACKEND"); be != "" {
		c.Backend = be
	}
	if tr, err = newEngine(c); err != nil {
		b.Fatal(err)
	}
	specs := paramSpecs(c)
	zeros := make([][]float32, len(specs))
	for i, s := range specs {
		zeros[i] = make([]float32, size(s.Shape))
	}
	tr.setState(initParams(c, specs), zeros, zeros)
	tok, tgt, _ = newSynthData(c.Vocab).TrainBatch(c.Seed, 0, c.Batch, c.Context)
	if _, _, err := tr.runStep(0, tok, tgt); err != nil {
		tr.close()
		b.Fatal(err)
	}
	return c, tr, tok, tgt
}

// Package kernelspeed is the pipeline stage that measures the native attention
// kernel's throughput on this machine and records it (benchfmt text and a
// markdown table) for the report. Its figures are measurements, not
// results: every output file is volatile, so it never breaks determinism
// checks and is re-measured only when the kernel code changes.
package kernelspeed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"routebench/internal/procstat"
	"routebench/model/native"
	"routebench/model/nativeeval"
	"routebench/pipeline"
)

// Kind is the stage kind and name.
const Kind = "kernelspeed"

// Output files.
const (
	TextFile     = "kernelspeed.txt" // benchfmt: `routebench bench compare` reads it
	MarkdownFile = "kernelspeed.md"
)

// PeakSize is the edge of PeakProduct's square product.
const PeakSize = 2048

// PeakProduct is the yardstick for "fraction of peak", here and in
// bench/: the native GEMM on a PeakSize^3 product of seeded operands,
// measured beside what it judges, so that a host slower or faster for that
// minute moves both alike (a fixed OpenBLAS figure went stale: 346 GFLOP/s
// when it was written, 380-408 in later runs of make bench-speed, where
// this product ran at 0.97-0.99 of it). run performs one product; flops is
// its count.
func PeakProduct() (run func(), flops float64) {
	r := rand.New(rand.NewPCG(1, 2))
	n := PeakSize
	a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	return func() { native.MatMul(c, a, b, n, n, n, false, false, false, 0) }, 2 * float64(n) * float64(n) * float64(n)
}

// Config says which shapes to measure.
type Config struct {
	Heads   int   `json:"heads"`
	DHead   int   `json:"d_head"`
	Lengths []int `json:"lengths"`
	Count   int   `json:"count"` // repetitions per benchmark (medians reported)
}

// NewConfig measures the cpu profile's attention shape (4 heads of 32) at
// the given lengths.
func NewConfig(lengths []int, count int) Config {
	return Config{Heads: 4, DHead: 32, Lengths: lengths, Count: count}
}

type flavour struct {
	name, rotation                string
	valueRot, alibi, kerple, path bool
}

// flavours cost differently; learned-* run exactly the random-* kernels,
// and path-fox's gate adds only a bias to path's (its FLOPs are path's).
var flavours = []flavour{
	{"nope", "none", false, false, false, false},
	{"rope", "rope", false, false, false, false},
	{"alibi", "none", false, true, false, false},
	{"kerple-log", "none", false, false, true, false},
	{"random-qk", "accumulated", false, false, false, false},
	{"random-qkv", "accumulated", true, false, false, false},
	{"path", "none", false, false, false, true},
}

// Stage returns the benchmark stage.
func Stage(cfg Config) *pipeline.Stage {
	return &pipeline.Stage{
		Name: Kind, Kind: Kind, Config: cfg,
		Code:     []string{"routebench/stages/kernelspeed"},
		Volatile: []string{TextFile, MarkdownFile},
		Run:      func(rc *pipeline.RunContext) error { return run(rc, cfg) },
	}
}

func run(rc *pipeline.RunContext, cfg Config) error {
	if cfg.Count <= 0 || len(cfg.Lengths) == 0 {
		return fmt.Errorf("kernelspeed: count %d and lengths %v must be positive", cfg.Count, cfg.Lengths)
	}
	var txt, md strings.Builder
	fmt.Fprintf(&txt, "goos: %s\ngoarch: %s\ncpu: %s\nkernel: %s\npkg: routebench/model/native\n", runtime.GOOS, runtime.GOARCH, pipeline.CPUModel(), native.KernelName())
	total := int64((len(flavours)*len(cfg.Lengths) + 2) * cfg.Count)
	var done int64
	// measure runs f as a benchmark Count times, each line into txt, and
	// returns the wall-clock and per-CPU-second rates of flops each, sorted.
	measure := func(name string, flops float64, f func()) (walls, cpus []float64, err error) {
		for c := 0; c < cfg.Count; c++ {
			if err := rc.Context.Err(); err != nil {
				return nil, nil, err
			}
			var cpu float64 // CPU seconds of the benchmark's last (reported) run
			r := testing.Benchmark(func(b *testing.B) {
				cpu0 := procstat.CPUSeconds()
				for b.Loop() {
					f()
				}
				cpu = procstat.CPUSeconds() - cpu0
			})
			sec := r.T.Seconds() / float64(r.N)
			walls = append(walls, flops/sec/1e9)
			fmt.Fprintf(&txt, "Benchmark%s-%d\t%d\t%.0f ns/op\t%.2f GFLOP/s", name, runtime.GOMAXPROCS(0), r.N, sec*1e9, walls[c])
			if cpu > 0 { // 0 where the process's CPU time cannot be read
				cpus = append(cpus, flops*float64(r.N)/cpu/1e9)
				fmt.Fprintf(&txt, "\t%.2f GFLOP/cpu-s", cpus[len(cpus)-1])
			}
			txt.WriteString("\n")
			done++
			rc.Progress(done, total, name)
		}
		slices.Sort(walls)
		slices.Sort(cpus)
		return walls, cpus, nil
	}
	// The reference runs Count times before the attention and Count times
	// after it, and its best rate is the peak: a host slowed for the
	// minute of one set of runs (measured: 322.6 GFLOP/s against 400.9 in
	// the stage's run before) would otherwise inflate every fraction.
	product, productFlops := PeakProduct()
	n := PeakSize
	peakName := fmt.Sprintf("Gemm/peak/%dx%dx%d", n, n, n)
	peakWalls, peakCPUs, err := measure(peakName, productFlops, product)
	if err != nil {
		return err
	}
	type row struct {
		name             string
		L                int
		wall, cpu, token float64
	}
	var rows []row
	for _, f := range flavours {
		for _, L := range cfg.Lengths {
			att, qkv, out, err := problem(f, cfg, L)
			if err != nil {
				return err
			}
			walls, cpus, err := measure(fmt.Sprintf("Attention/variant=%s/L=%d", f.name, L), att.FLOPs(), func() { att.Run(out, qkv, 0) })
			if err != nil {
				return err
			}
			wall := median(walls)
			rows = append(rows, row{f.name, L, wall, median(cpus), wall * 1e9 / att.FLOPs() * float64(L)})
		}
	}
	walls, cpus, err := measure(peakName, productFlops, product)
	if err != nil {
		return err
	}
	peak, peakCPU := slices.Max(append(peakWalls, walls...)), math.NaN()
	if c := append(peakCPUs, cpus...); len(c) > 0 {
		peakCPU = slices.Max(c)
	}
	fmt.Fprintf(&md, "Native streaming attention (%d heads x d_head %d, causal; FLOPs = 4 L^2/2 d per head; PaTH's as its evaluator spends them, 4d + 2d^2/64 per pair for the score, the value and the query's carry through the key blocks, and about 16 x 64 d + 64^2 per token for each block's forms and the query block's own scores; PaTH's time includes building the key blocks' forms, as the forward pass pays per layer), kernel `%s`, GOMAXPROCS %d; median of %d runs. Peak: the native GEMM on a %d^3 product in the same stage, %.1f GFLOP/s (%.1f per CPU-second), the best of %d runs before the attention and %d after it (make bench-speed puts this product at 0.97-0.99 of OpenBLAS's 2-thread sgemm). GFLOP per CPU-second is the steadier figure on a shared machine: another job's load lowers the wall-clock rates of both the kernel and the peak.\n\n| variant | L | GFLOP/s | GFLOP per CPU-s | tokens/s | %% of peak |\n|---|---|---|---|---|---|\n",
		cfg.Heads, cfg.DHead, native.KernelName(), runtime.GOMAXPROCS(0), cfg.Count, n, peak, peakCPU, cfg.Count, cfg.Count)
	for _, r := range rows {
		fmt.Fprintf(&md, "| %s | %d | %.1f | %.1f | %.0f | %.1f%% |\n", r.name, r.L, r.wall, r.cpu, r.token, 100*r.wall/peak)
	}
	md.WriteString("\nThe same benchmarks against gomlx, and the evaluator's memory, are `go test -bench . ./bench/` (`make bench`); the OpenBLAS reference, `make bench-speed`.\n")
	if err := os.WriteFile(filepath.Join(rc.OutDir, TextFile), []byte(txt.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(rc.OutDir, MarkdownFile), []byte(md.String()), 0o644)
}

// median is the middle of sorted x (NaN for an empty x).
func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return x[len(x)/2]
}

// problem builds a seeded random attention problem of one flavour.
func problem(f flavour, cfg Config, L int) (*nativeeval.Attention, []float32, []float32, error) {
	r := rand.New(rand.NewPCG(uint64(L), 17))
	D := cfg.Heads * cfg.DHead
	spec := nativeeval.AttentionSpec{L: L, Heads: cfg.Heads, DHead: cfg.DHead, Rotation: f.rotation, RopeBase: 10000,
		ValueRot: f.valueRot, ALiBi: f.alibi}
	if f.rotation == "accumulated" {
		const V = 257
		spec.Angles = make([]float32, V*D/2)
		for i := range spec.Angles {
			spec.Angles[i] = float32(0.5 * r.NormFloat64())
		}
		spec.Tokens = make([]int32, L)
		for i := range spec.Tokens {
			spec.Tokens[i] = int32(r.IntN(V))
		}
	}
	if f.kerple { // p in (0, 2), a in (0, 1): KERPLE's init range (modelspec/kerple.go)
		spec.KerpleP, spec.KerpleA = make([]float32, cfg.Heads), make([]float32, cfg.Heads)
		for h := range spec.KerpleP {
			spec.KerpleP[h], spec.KerpleA[h] = float32(2*r.Float64()), float32(r.Float64())
		}
	}
	if f.path { // unit directions and betas in (0, 2), as a trained layer's steps
		spec.PathW, spec.PathBeta = make([]float32, L*D), make([]float32, cfg.Heads*L)
		for t := 0; t < cfg.Heads*L; t++ {
			w := spec.PathW[t*cfg.DHead : (t+1)*cfg.DHead]
			var n float64
			for c := range w {
				w[c] = float32(r.NormFloat64())
				n += float64(w[c]) * float64(w[c])
			}
			for c := range w {
				w[c] /= float32(math.Sqrt(n))
			}
			spec.PathBeta[t] = float32(2 * r.Float64())
		}
	}
	att, err := nativeeval.NewAttention(spec)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("kernelspeed: %s L=%d: %w", f.name, L, err)
	}
	qkv := make([]float32, L*3*D)
	for i := range qkv {
		qkv[i] = float32(r.NormFloat64())
	}
	return att, qkv, make([]float32, L*D), nil
}

// Package cost estimates how long a plan's stages take on this machine
// before they run: a flop count per stage from its config (train and
// evaluate from the model's shape, stepspeed and kernelspeed from what they
// time), turned into seconds by a calibration fitted on the stage times the
// store recorded, or by built-in constants measured on the 2-core dev
// machine, moved to this host by its probe's figures (Host, Speeds;
// planner/hostcal measures them).
//
// It only reads stage configs and run records. No stage may import it and
// it must never change a stage's config: an estimate is advice, and a key
// that moved with the cost model would recompute the whole store.
package cost

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"routebench/modelspec"
	"routebench/pipeline"
	"routebench/stages/evaluate"
	"routebench/stages/kernelspeed"
	"routebench/stages/stepspeed"
)

// Variant classes: the families whose training and evaluation run at
// different speeds per flop.
const (
	ClassBase = "base" // nope, rope, alibi, kerple-log, random-*: a fixed rotation or none, a distance bias
	ClassProj = "proj" // learned tables and angle projections: gradients through the angles
	ClassPaTH = "path" // Householder transport (path, path-fox)
)

// ClassOf is a variant's cost class; an unknown variant is priced as base.
func ClassOf(variant string) string {
	v, err := modelspec.LookupVariant(variant)
	switch {
	case err != nil:
		return ClassBase
	case v.Householder:
		return ClassPaTH
	case v.Learned || v.AngleProj:
		return ClassProj
	}
	return ClassBase
}

// LayerParams is the number of non-embedding parameters of one block: the
// four attention projections, the MLP and what the variant adds (PaTH's
// transport, the angle projection). Norms and biases are left out (under
// 1% at every built-in shape).
func LayerParams(c modelspec.Config) float64 {
	d := c.DModel
	n := 4*d*d + 2*d*c.DHidden
	if v, err := modelspec.LookupVariant(c.Variant); err == nil {
		if v.Householder {
			n += modelspec.PathParams(d, c.Heads, v.ForgetGate)
		}
		if v.AngleProj {
			n += modelspec.AngleProjParams(d, c.Heads)
		}
	}
	return float64(n)
}

// TrainFlops is the work of training c: per token 6 x non-embedding
// params (forward and backward), 6 x layers x T x d_model for causal
// attention (QK^T and AV, 2 x 2 x T x d forward over half the pairs,
// times 3 with the backward) and 6 x d_model x vocab for the LM head;
// for PaTH, PathTrainTransport(c) more.
func TrainFlops(c modelspec.Config) float64 {
	T, d, L := float64(c.Context), float64(c.DModel), float64(c.Layers)
	perToken := 6*L*LayerParams(c) + 6*L*T*d + 6*d*float64(c.Vocab)
	return float64(c.Steps)*float64(c.Batch)*T*perToken + PathTrainTransport(c)
}

// PathTrainTransport is the work of PaTH's chunked transport in training
// beyond the plain attention TrainFlops counts (0 for other variants):
// steps x batch x layers x heads x, per window and head, what the native
// trainer (model/nativetrain/householder_attention.go, householder_backward.go)
// spends: each 64-step block's UT form, its scores and its backward pass
// (about 21 n^2 d + 2.5 n^3 flops for a block of n steps, from its
// products' shapes and triangles), and the queries' carry through the
// blocks by d x d products (T^2 d^2 / 64 forward, twice that backward).
func PathTrainTransport(c modelspec.Config) float64 {
	if ClassOf(c.Variant) != ClassPaTH {
		return 0
	}
	T, d := c.Context, float64(c.DModel/c.Heads)
	var perHead float64
	for a0 := 0; a0 < T; a0 += pathChunk {
		n := float64(min(pathChunk, T-a0))
		perHead += 21*n*n*d + 2.5*n*n*n
	}
	perHead += 3 * float64(T) * float64(T) * d * d / pathChunk
	return float64(c.Steps) * float64(c.Batch) * float64(c.Layers) * float64(c.Heads) * perHead
}

// pathChunk is the native trainer's PaTH block length.
const pathChunk = 64

// ForwardFlops is one forward pass over a window of length n: per layer
// 2 x n x params and 2 x (n^2/2) x d_model x 2 for causal QK^T and AV,
// plus the head; attn multiplies the attention part (PaTH's transport).
func ForwardFlops(m modelspec.Config, n int, attn float64) float64 {
	N, d, L := float64(n), float64(m.DModel), float64(m.Layers)
	return L*(2*N*LayerParams(m)+attn*2*N*N*d) + 2*N*d*float64(m.Vocab)
}

// PathAttention is how much more PaTH's attention costs than the plain
// kernel's at window length n, per flop of the plain count: the streaming
// evaluator (model/nativeeval/householder_attention.go) spends the plain
// flops per pair plus a query's d x d carry out of each key block (2d^2 /
// 64, a quarter more at d = 32), plus the per-block work of each key
// block's forms, which weighs less as n grows. 1.37 + 0.31 x 1,024 / n
// fits kernelspeed's figures (cold reproduce of 2026-12-02 after the
// vector row passes: path 307,021 and 139,674 tokens/s at 1,024 and 4,096
// against rope's 516,591 and 201,687: 1.68x and 1.44x). Before the AVX
// transposes it was 1.34 + 0.45 x 1,024 / n (1.80x and 1.46x); the WY-form
// carry cost 2.26x and 2.11x, the scalar evaluator 6.4x and 3.7x.
func PathAttention(n int) float64 { return pathAttnFar + pathAttnNear*1024/float64(n) }

const (
	pathAttnFar  = 1.37
	pathAttnNear = 0.31
)

// foxGate is what PaTH-FoX's forgetting gate adds to PaTH's attention, per
// flop of the plain count: the evaluator adds (G_i - G_ref) s + (G_ref -
// G_j) s to every score inside the softmax step
// (native.OnlineSoftmaxOffsets64) and computes the per-key terms once per
// score block. Fitted to the cold run of 2026-12-02 after that change:
// path 79.3 s, path-fox 81.0 s. (As two float32 row passes per block it
// cost 0.14: 85 s against 93 s; as a float64 scalar pass 0.92: 80 s
// against 123 s.)
const foxGate = 0.035

// diagFactor is what the far-mass and entropy diagnostic adds to a window,
// in plain forwards of that window: the evaluator sums them in the
// output's own pass, the entropy terms inside the softmax kernel
// (model/nativeeval/diag.go, native.OnlineSoftmaxEntropy64).
// BenchmarkLogProbs at 4,096 (random-qkv, 2-core machine, 2026-12-02, old
// and new binaries interleaved): 66.0 -> 67.4 ms plain, 93.6 -> 79.5 ms
// with the diagnostic, so 0.18. (With a copy and a scalar pass per block
// it was 0.67; as a second attention pass about one more forward.)
const diagFactor = 0.18

// EvalFlops is the work of evaluating model m under c: the copy probe's
// passes, and at every length WindowsAt(L) forward passes, plus the far-mass diagnostic on FarWindows
// windows per length (diagFactor of a plain forward each). Sliding
// protocols reuse the primary windows' passes and cost nothing here. Under
// evaluate.DesignPrefixes the lengths between T and the longest are
// prefixes of the longest windows' passes (their diagnostics too) and cost
// nothing either, except under an extension (evaluate.Config.RopeScaling),
// where every length is a pass of its own over the Windows long windows.
func EvalFlops(c evaluate.Config, m modelspec.Config) float64 {
	var f float64
	longest := slices.Max(c.Multipliers)
	for _, mult := range c.Multipliers {
		if c.Design == evaluate.DesignPrefixes && c.RopeScaling == "" && mult != 1 && mult != longest {
			continue
		}
		n := c.Context * mult
		windows := c.WindowsAt(n)
		if c.Design == evaluate.DesignPrefixes && mult != 1 {
			windows = c.Windows // the long windows' prefixes (WindowsAt(longest) is Windows)
		}
		attn := 1.0
		if ClassOf(m.Variant) == ClassPaTH {
			attn = PathAttention(n)
			if v, err := modelspec.LookupVariant(m.Variant); err == nil && v.ForgetGate {
				attn += foxGate
			}
		}
		f += float64(windows)*ForwardFlops(m, n, attn) + diagFactor*float64(min(c.FarWindows, windows))*ForwardFlops(m, n, 1)
	}
	// The copy probe's passes (one per gap; none under an extension). The
	// mechanism probe and the route mixing window are post-processing of
	// the passes above, a few seconds per model, not priced.
	attn := 1.0
	if ClassOf(m.Variant) == ClassPaTH {
		attn = PathAttention(c.Context * longest)
	}
	for _, n := range c.CopyPassLengths() {
		f += ForwardFlops(m, n, attn)
	}
	return f
}

// KernelFlops is the attention work kernelspeed times: Count repetitions
// of each kernel at each length, ~4 L^2 x heads x d_head for QK^T and AV;
// the constant folds in how many kernels it compares.
func KernelFlops(c kernelspeed.Config) float64 {
	var f float64
	for _, n := range c.Lengths {
		f += 4 * float64(n) * float64(n) * float64(c.Heads*c.DHead)
	}
	return float64(c.Count) * f
}

// StepFlops is the training work stepspeed times: Rounds x Steps steps of
// each run.
func StepFlops(c stepspeed.Config) float64 {
	var f float64
	for _, r := range c.Runs {
		if r.Steps > 0 {
			f += TrainFlops(r) / float64(r.Steps) * float64(c.Rounds*c.Steps)
		}
	}
	return f
}

// Work is what a stage costs before calibration: its flops (0 for a stage
// priced as a constant) and the class its seconds per flop are fitted by.
type Work struct {
	Kind, Class string
	Flops       float64
}

// group is the calibration bucket of w: kind and class.
func (w Work) group() string { return w.Kind + "/" + w.Class }

// WorkOf prices one stage of a plan from its config. Evaluate reads its
// model's shape from its train input.
func WorkOf(s *pipeline.Stage) Work {
	switch cfg := s.Config.(type) {
	case modelspec.Config:
		return Work{Kind: s.Kind, Class: ClassOf(cfg.Variant), Flops: TrainFlops(cfg)}
	case evaluate.Config:
		for _, in := range s.Inputs {
			if m, ok := in.Stage.Config.(modelspec.Config); ok {
				return Work{Kind: s.Kind, Class: ClassOf(m.Variant), Flops: EvalFlops(cfg, m)}
			}
		}
	case kernelspeed.Config:
		return Work{Kind: s.Kind, Class: ClassBase, Flops: KernelFlops(cfg)}
	case stepspeed.Config:
		return Work{Kind: s.Kind, Class: ClassBase, Flops: StepFlops(cfg)}
	}
	return Work{Kind: s.Kind, Class: ClassBase}
}

// Rate converts a group's work into seconds: Seconds per flop plus
// Overhead, or Overhead alone for a stage without a flop count.
type Rate struct {
	SecPerFlop, Overhead float64
	Source               string // "store: N entries" or "built-in"
}

func (r Rate) seconds(w Work) float64 { return r.Overhead + w.Flops*r.SecPerFlop }

// DevCores is the core count of the machine the built-in constants were
// measured on (AMD EPYC, 2 cores, 2026-12-01).
const DevCores = 2

// builtin holds the dev machine's rates, derived with the formulas above
// from the cpu profile's measured times (d 128, 2 layers, 4 heads, d_hidden
// 512, vocab 257, T 512, batch 8, 400 steps, lengths to 65,536, 2 cores,
// the cold reproduce of 2026-12-02 after the vector row passes: 36m35s, 43
// stages; RESULTS.md's stage table):
//
//   - train: 5.48e12 flops per base model; the base variants trained in
//     38-45 s, median 42.3 s: 136 GFLOP/s with 2 s fixed (start-up, the
//     checkpoints and held-out evals are in the rate). learned and proj
//     (39-47 s) are priced 0.97x base per flop (the median of their three
//     ratios). PaTH (5.7e12 + 1.0e12 flops of its chunked transport,
//     PathTrainTransport; 61 s path, 67 s path-fox): 1.26x base per flop,
//     fitted to both at their median. PaTH at T != 512 is a prediction.
//   - evaluate: 1.08e13 flops per base model (lengths 512..65,536, 131,072
//     tokens at each, 2 diagnostic windows at each), 58-65 s, median 61 s:
//     189 GFLOP/s with 4 s fixed (loading shards and weights). PaTH
//     (1.42e13 with PathAttention): path's 85 s at 1.08x the base rate per
//     flop, and path-fox's 93 s with foxGate.
//   - stepspeed: 5 rounds x 2 steps of 11 runs, 1.57e12 flops, 23 s: the
//     train rate and 11 s fixed (building 11 models; PaTH's steps cost
//     more per flop than the train rate says).
//   - kernelspeed: 5 x 4 x 4 x 32 x (1024^2 + 4096^2) = 4.6e10 flops of
//     one reference kernel, 72 s for its several kernels and warm-ups:
//     priced per flop of that reference, no fixed part.
//   - theory 40 s; tokenize (the default corpus), report and a sweep's
//     study a second or two.
//
// The constants of the run before (102 GFLOP/s training, PaTH 1.19x, the
// float64 gate at 0.92) priced this profile at 41m35s, 14% over the
// 36m35s it took (fitted to the run before, they priced it at 41m36s
// against its 41m6s). The cold run after the chunked dW products, the
// gate's offsets in the softmax step and the two-pass softmax took 36m44s
// against the 36m35s these constants printed (-0.4%): base trains 36-48 s,
// PaTH's 56 and 70 s, evaluations 56-81 s (the machine slowed during the
// run: the same stages took 56-64 s in its first third), path 79 s and
// path-fox 81 s; only foxGate was refitted to it.
//
// Refitted (2026-12-03) to the cold run after the per-micro-tile
// triangles, the in-place 32-column panels and PaTH's tape of -L, K~^T and
// P^T (29m10s against the 36m29s the constants above printed: +25%; the
// host ran faster too, OpenBLAS's 2-thread peak 384 against 332 GFLOP/s
// the day before): base trains 29-37 s, median 32.7 s: 179 GFLOP/s;
// learned and proj 1.03x (32.3, 33.5, 37.8 s); PaTH 1.19x (45.2 and
// 48.0 s); base evaluations 45-57 s, median 49.1 s: 240 GFLOP/s; PaTH's
// 63.4 s (path-fox 66.1 s with foxGate) at 1.00x; stepspeed 18 s (9 s
// fixed); theory 25 s.
//
// Refitted (2026-12-03, later) to the cold run after the evaluator's
// grouped query blocks, vector head-buffer fill and exp2 softmax step
// (27m33s against the 28m20s the constants above printed for it, theory
// cached: -2.8%, out of sample): base evaluations 39-48 s, median 43.0 s:
// 278 GFLOP/s; PaTH's 66.6 s and path-fox's 65.7 s (rerun when the host
// had recovered: during the cold run the second vCPU was shared, GEMM at
// one core's rate, and they took 72 and 82 s): 1.22x; training as before
// (base median 33.1 s, PaTH 48-52 s).
var builtin = map[string]Rate{
	"train/" + ClassBase:       {SecPerFlop: 1 / 179e9, Overhead: 2},
	"train/" + ClassProj:       {SecPerFlop: 1.03 / 179e9, Overhead: 2},
	"train/" + ClassPaTH:       {SecPerFlop: 1.19 / 179e9, Overhead: 2},
	"evaluate/" + ClassBase:    {SecPerFlop: 1 / 278e9, Overhead: 4},
	"evaluate/" + ClassProj:    {SecPerFlop: 1 / 278e9, Overhead: 4},
	"evaluate/" + ClassPaTH:    {SecPerFlop: 1.22 / 278e9, Overhead: 4},
	"stepspeed/" + ClassBase:   {SecPerFlop: 1 / 179e9, Overhead: 9},
	"kernelspeed/" + ClassBase: {SecPerFlop: 73 / 4.6e10},
	"theory/" + ClassBase:      {Overhead: 25},
	"tokenize/" + ClassBase:    {Overhead: 1},
	"report/" + ClassBase:      {Overhead: 2},
	"study/" + ClassBase:       {Overhead: 2},
}

// Calibration maps a stage's work to seconds on this machine.
type Calibration struct {
	Cores int
	rates map[string]Rate
}

// Builtin is the dev machine's constants scaled to cores: the stages use
// every core (GOMAXPROCS), so twice the cores is taken as half the time.
func Builtin(cores int) Calibration {
	cores = max(cores, 1)
	rates := map[string]Rate{}
	for g, r := range builtin {
		s := float64(DevCores) / float64(cores)
		rates[g] = Rate{SecPerFlop: r.SecPerFlop * s, Overhead: r.Overhead * s, Source: "built-in"}
	}
	return Calibration{Cores: cores, rates: rates}
}

// Record is one cached stage's recorded run: the stage as planned (its
// config) and its run.json.
type Record struct {
	Stage *pipeline.Stage
	Run   pipeline.RunInfo
}

// Fit is the built-in calibration with every group that has records
// replaced by the store's own: seconds per flop the median of wall/flops
// over that group's records (a stage without flops: the median wall time),
// no fixed part, so that a recorded config is reproduced exactly and
// another scales by its flop ratio. A record made on another core count is
// scaled to cores first.
func Fit(records []Record, cores int) Calibration { return FitOver(Builtin(cores), records) }

// FitOver is Fit over another calibration than the built-in one (a host
// probe's, cost.Host): the groups without records keep base's rates.
func FitOver(base Calibration, records []Record) Calibration {
	cal := Calibration{Cores: base.Cores, rates: maps.Clone(base.rates)}
	samples := map[string][]float64{}
	perFlop := map[string]bool{}
	for _, r := range records {
		w := WorkOf(r.Stage)
		wall := r.Run.WallSec
		if r.Run.Cores > 0 {
			wall *= float64(r.Run.Cores) / float64(cal.Cores)
		}
		if w.Flops > 0 {
			wall /= w.Flops
			perFlop[w.group()] = true
		}
		samples[w.group()] = append(samples[w.group()], wall)
	}
	for g, xs := range samples {
		src := fmt.Sprintf("store: %d entries", len(xs))
		if len(xs) == 1 {
			src = "store: 1 entry"
		}
		if perFlop[g] {
			cal.rates[g] = Rate{SecPerFlop: median(xs), Source: src}
		} else {
			cal.rates[g] = Rate{Overhead: median(xs), Source: src}
		}
	}
	return cal
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Estimate is one stage's predicted wall time.
type Estimate struct {
	Stage       string
	Work        Work
	Seconds     float64
	Calibration string // "store: 33 entries" or "built-in"
}

// Stage prices one stage. A group neither the store nor the built-in
// table knows (a new stage kind) is priced at 0 s and says so.
func (c Calibration) Stage(s *pipeline.Stage) Estimate {
	w := WorkOf(s)
	r, ok := c.rates[w.group()]
	if !ok {
		r, ok = c.rates[w.Kind+"/"+ClassBase]
	}
	if !ok {
		return Estimate{Stage: s.Name, Work: w, Calibration: "unknown stage kind " + w.Kind + ": not priced"}
	}
	return Estimate{Stage: s.Name, Work: w, Seconds: r.seconds(w), Calibration: r.Source}
}

// Plan prices every stage of plan, in plan order, and the total: the
// stages run one after another, each on every core.
func (c Calibration) Plan(plan *pipeline.Plan) ([]Estimate, float64) {
	var est []Estimate
	var total float64
	for _, s := range plan.Stages {
		e := c.Stage(s)
		est = append(est, e)
		total += e.Seconds
	}
	return est, total
}

// Duration renders seconds as a wall time rounded to the second.
func Duration(sec float64) string {
	return (time.Duration(sec * float64(time.Second))).Round(time.Second).String()
}

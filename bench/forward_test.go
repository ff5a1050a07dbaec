package bench

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"routebench/internal/procstat"
	"routebench/model/gomlxeval"
	"routebench/model/native"
	"routebench/model/nativeeval"
	"routebench/modelspec"
	"routebench/modelspec/weights"
	"routebench/modelspec/weights/weightstest"
	"routebench/planner"
)

// Peak memory of a forward pass is measured in a fresh child process (this
// test binary re-executed with childEnv set), reading VmHWM from
// /proc/self/status: the parent's own allocations and earlier benchmarks
// would otherwise pollute the high-water mark.
const childEnv = "ROUTEBENCH_FORWARD_CHILD"

// profileArch is a built-in profile's shape (planner.TrainConfig: never a
// copy) with the costliest rotation variant (accumulated rotations with
// value transport).
func profileArch(profile string) modelspec.Arch {
	cfg, err := planner.TrainConfig(profile, "random-qkv")
	if err != nil {
		panic(err) // the built-in profiles build, or every planner test fails first
	}
	return cfg.Arch()
}

func cpuArch() modelspec.Arch   { return profileArch("cpu") }
func paperArch() modelspec.Arch { return profileArch("paper") }

// archs are the shapes a forward child can measure, by name.
var archs = map[string]func() modelspec.Arch{"cpu": cpuArch, "paper": paperArch}

// TestForwardChild is the child's body; it does nothing in a normal run.
func TestForwardChild(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		t.Skip("runs only as the child of a forward memory measurement")
	}
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 3 {
		t.Fatalf("%s=%q: want <cpu|paper>:<token count>[:native|blockwise|full]", childEnv, spec)
	}
	arch, ok := archs[parts[0]]
	L, err := strconv.Atoi(parts[1])
	if !ok || err != nil {
		t.Fatalf("%s=%q: unknown shape or bad token count", childEnv, spec)
	}
	evaluator := "native"
	if len(parts) == 3 {
		evaluator = parts[2]
	}
	set := weightstest.RandomSet(t, arch(), 1)
	r := rand.New(rand.NewPCG(uint64(L), 4))
	toks := make([]int32, L+1)
	for i := range toks {
		toks[i] = int32(r.IntN(set.Arch.Vocab))
	}
	eval, err := evaluatorFor(evaluator, set)
	if err != nil {
		t.Fatal(err)
	}
	start, cpu0 := time.Now(), procstat.CPUSeconds()
	lps, err := eval(toks)
	if err != nil {
		t.Fatal(err)
	}
	sec, cpu := time.Since(start).Seconds(), procstat.CPUSeconds()-cpu0
	var nll float64
	for _, lp := range lps {
		nll -= lp
	}
	hwm, err := vmHWM()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("FORWARD L=%d seconds=%.4f cpu_seconds=%.4f vmhwm_kib=%d mean_nll=%.4f\n", L, sec, cpu, hwm, nll/float64(L))
}

// blockwiseChunk is the query chunk of gomlx's blockwise evaluator here.
const blockwiseChunk = 1024

// evaluatorFor returns a function giving the log-probabilities of toks[1:]
// given toks[:L] by one of three evaluators: the native one, gomlx's
// blockwise one (simplego) or gomlx's full-attention Forward (simplego;
// O(H L^2) memory). Loading the native model happens here, outside the
// timed call, as the evaluate stage loads it once for all windows.
func evaluatorFor(evaluator string, set *weights.Set) (func(toks []int32) ([]float64, error), error) {
	switch evaluator {
	case "native":
		m, err := nativeeval.Load(set)
		if err != nil {
			return nil, err
		}
		return func(toks []int32) ([]float64, error) {
			L := len(toks) - 1
			res, err := m.LogProbs(context.Background(), toks[:L], toks[1:], nativeeval.Options{})
			return res.LogProbs, err
		}, nil
	case "blockwise", "blockwise-sequential":
		backend := "go"
		if evaluator == "blockwise-sequential" {
			backend = "go:ops_sequential,dotgeneral_large"
		}
		return func(toks []int32) ([]float64, error) {
			L := len(toks) - 1
			return gomlxeval.LogProbsBlockwise(set, toks[:L], toks[1:], blockwiseChunk, backend)
		}, nil
	case "full":
		return func(toks []int32) ([]float64, error) {
			L := len(toks) - 1
			logits, err := gomlxeval.Forward(set, toks[:L])
			if err != nil {
				return nil, err
			}
			lps := make([]float64, L)
			for i, row := range logits {
				lps[i] = weightstest.LogProb(row, toks[i+1])
			}
			return lps, nil
		}, nil
	}
	return nil, fmt.Errorf("unknown evaluator %q", evaluator)
}

func vmHWM() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("peak memory needs Linux /proc: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM line in /proc/self/status")
}

type forwardRun struct {
	seconds, cpuSeconds float64 // of the LogProbs call alone
	peakMiB             float64
}

// runForwardChild runs one forward of L tokens of the named shape (a key
// of archs) in a child process, on the native evaluator unless another is
// named (see evaluate).
func runForwardChild(arch string, L int, evaluator ...string) (forwardRun, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestForwardChild$", "-test.count=1", "-test.v", "-test.timeout=0")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s", childEnv, strings.Join(append([]string{arch, strconv.Itoa(L)}, evaluator...), ":")))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return forwardRun{}, fmt.Errorf("forward child for L=%d: %w\n%s", L, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "FORWARD ") {
			continue
		}
		var l int
		var r forwardRun
		var kib int64
		var nll float64
		if _, err := fmt.Sscanf(line, "FORWARD L=%d seconds=%g cpu_seconds=%g vmhwm_kib=%d mean_nll=%g", &l, &r.seconds, &r.cpuSeconds, &kib, &nll); err != nil {
			return forwardRun{}, fmt.Errorf("forward child: bad line %q: %w", line, err)
		}
		if math.IsNaN(nll) || math.IsInf(nll, 0) {
			return forwardRun{}, fmt.Errorf("forward child: non-finite loss on %d tokens", L)
		}
		r.peakMiB = float64(kib) / 1024
		return r, nil
	}
	return forwardRun{}, fmt.Errorf("forward child for L=%d printed no result:\n%s", L, out)
}

// forwardBudgets are the peak-RSS goals at the cpu profile.
var forwardBudgets = []struct {
	L      int
	maxMiB float64
}{{16384, 1024}, {65536, 4096}}

// BenchmarkForward reports tokens/s of a whole forward (all layers, output
// layer and log-probs), tokens per CPU-second (robust to other jobs on the
// machine; times the core count for an uncontended estimate) and the
// child's peak RSS.
func BenchmarkForward(b *testing.B) {
	b.Logf("native kernels: %s", native.KernelName())
	for _, c := range forwardBudgets {
		b.Run(fmt.Sprintf("variant=random-qkv/L=%d", c.L), func(b *testing.B) {
			if c.L > 16384 && !native.VectorKernels() && os.Getenv("ROUTEBENCH_LONG") == "" {
				b.Skip("portable kernels take minutes at 65K tokens: build with GOEXPERIMENT=simd or set ROUTEBENCH_LONG=1")
			}
			var sec, cpu, peak float64
			for b.Loop() {
				r, err := runForwardChild("cpu", c.L)
				if err != nil {
					b.Fatal(err)
				}
				sec += r.seconds
				cpu += r.cpuSeconds
				peak = max(peak, r.peakMiB)
			}
			b.ReportMetric(float64(c.L)*float64(b.N)/sec, "tokens/s")
			b.ReportMetric(float64(c.L)*float64(b.N)/cpu, "tokens/cpu-s")
			b.ReportMetric(peak, "peak-MiB")
		})
	}
}

// TestForwardPeakMemory checks the 16K-token budget (1 GiB); the 65K one
// is measured by BenchmarkForward.
func TestForwardPeakMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a 16K-token forward takes seconds")
	}
	c := forwardBudgets[0]
	r, err := runForwardChild("cpu", c.L)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("L=%d: %.2f s (%.2f CPU-s), %.0f tokens/s, peak RSS %.0f MiB (%s kernels)", c.L, r.seconds, r.cpuSeconds, float64(c.L)/r.seconds, r.peakMiB, native.KernelName())
	if r.peakMiB > c.maxMiB {
		t.Errorf("forward of %d tokens peaked at %.0f MiB, budget %.0f MiB", c.L, r.peakMiB, c.maxMiB)
	}
}

// paperEnv turns on BenchmarkForwardPaper: one 65,536-token window of the
// paper model costs ~140 TFLOP, about ten minutes on two cores, too long
// for `make bench`'s ten repetitions.
const paperEnv = "ROUTEBENCH_PAPER_EVAL"

// BenchmarkForwardPaper measures the native evaluator on the paper
// profile's model (random weights of its exact shape) at 512 and 65,536
// tokens: the figures behind the choice of evaluator for the paper profile
// (README, "The paper profile on a GPU"). Run it with `make bench-paper-eval`.
func BenchmarkForwardPaper(b *testing.B) {
	if os.Getenv(paperEnv) == "" {
		b.Skipf("set %s=1 (or run make bench-paper-eval): a 65,536-token window of the paper model takes minutes", paperEnv)
	}
	b.Logf("native kernels: %s", native.KernelName())
	for _, L := range []int{512, 4096, 65536} {
		b.Run(fmt.Sprintf("variant=random-qkv/L=%d", L), func(b *testing.B) {
			var sec, cpu, peak float64
			for b.Loop() {
				r, err := runForwardChild("paper", L)
				if err != nil {
					b.Fatal(err)
				}
				sec += r.seconds
				cpu += r.cpuSeconds
				peak = max(peak, r.peakMiB)
			}
			flops := float64(b.N) * forwardFLOPs(paperArch(), L)
			b.ReportMetric(float64(L)*float64(b.N)/sec, "tokens/s")
			b.ReportMetric(flops/sec/1e9, "GFLOP/s")
			b.ReportMetric(sec/float64(b.N), "s/window")
			b.ReportMetric(peak, "peak-MiB")
		})
	}
}

// forwardFLOPs is the conventional matmul count of one causal forward of L
// tokens: projections (4 D^2 per token and layer), MLP (2 D F), causal
// attention (QK^T and AV over L^2/2 pairs) and the unembedding (D V), each
// multiply-add counted as 2 FLOPs. Rotations and norms are not counted.
func forwardFLOPs(a modelspec.Arch, L int) float64 {
	l, D, F, V := float64(L), float64(a.DModel), float64(a.DHidden), float64(a.Vocab)
	perLayer := 2*l*4*D*D + 2*l*2*D*F + 4*l*l/2*D
	return float64(a.Layers)*perLayer + 2*l*D*V
}

// BenchmarkGomlxEvaluators measures gomlx's two evaluators on simplego at
// the cpu profile's shape: Forward (full attention, O(H L^2) memory) and
// LogProbsBlockwise (query chunks of blockwiseChunk), the latter with
// simplego's parallel and its sequential op scheduler; time and peak RSS.
// simplego materializes every op and its parallel scheduler keeps many
// chunks' buffers alive at once, so this bounds what the chunks save on a
// backend that runs the graph as written; XLA fuses and plans its own
// buffers. Opt-in with the paper benchmark (make bench-paper-eval): minutes.
func BenchmarkGomlxEvaluators(b *testing.B) {
	if os.Getenv(paperEnv) == "" {
		b.Skipf("set %s=1 (or run make bench-paper-eval): gomlx evaluation of long windows takes minutes", paperEnv)
	}
	for _, L := range []int{4096, 16384} {
		for _, ev := range []string{"full", "blockwise", "blockwise-sequential"} {
			if ev == "full" && L > 4096 {
				continue // measured: killed for memory at 16,384 tokens on 24 GiB
			}
			b.Run(fmt.Sprintf("evaluator=%s/L=%d", ev, L), func(b *testing.B) {
				var sec, peak float64
				for b.Loop() {
					r, err := runForwardChild("cpu", L, ev)
					if err != nil {
						b.Fatal(err)
					}
					sec += r.seconds
					peak = max(peak, r.peakMiB)
				}
				b.ReportMetric(float64(L)*float64(b.N)/sec, "tokens/s")
				b.ReportMetric(peak, "peak-MiB")
			})
		}
	}
}

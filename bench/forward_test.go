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

	"routebench/model/native"
	"routebench/model/weights"
)

// Peak memory of a forward pass is measured in a fresh child process (this
// test binary re-executed with childEnv set), reading VmHWM from
// /proc/self/status: the parent's own allocations and earlier benchmarks
// would otherwise pollute the high-water mark.
const childEnv = "ROUTEBENCH_FORWARD_CHILD"

// cpuArch is the cpu profile's shape (d_model 128, 2 layers, 4 heads, byte
// vocabulary 257) with the costliest variant (accumulated rotations with
// value transport).
func cpuArch() weights.Arch {
	return weights.Arch{Variant: "random-qkv", Profile: "cpu", Vocab: 257, DModel: 128, Layers: 2, Heads: 4,
		DHidden: 512, Context: 128, NormEps: 1e-5, RopeBase: 10000, Rotation: "accumulated", ValueRot: true}
}

func randomWeights(a weights.Arch, seed uint64) (*weights.Set, error) {
	r := rand.New(rand.NewPCG(seed, 3))
	mk := func(name string, scale, mean float64, shape ...int) weights.Tensor {
		n := 1
		for _, s := range shape {
			n *= s
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(mean + scale*r.NormFloat64())
		}
		return weights.Tensor{Name: name, Shape: shape, Data: x}
	}
	V, D, F, H := a.Vocab, a.DModel, a.DHidden, a.Heads
	s := 1 / math.Sqrt(float64(D))
	ts := []weights.Tensor{mk("embed", 1, 0, V, D), mk("normf", 0, 1, D), mk("unembed", s, 0, D, V),
		mk("angles", 0.5, 0, V, H, D/H/2)}
	for n := 0; n < a.Layers; n++ {
		p := fmt.Sprintf("block%03d/", n)
		ts = append(ts, mk(p+"norm1", 0, 1, D), mk(p+"norm2", 0, 1, D), mk(p+"wq", s, 0, D, D), mk(p+"wk", s, 0, D, D),
			mk(p+"wv", s, 0, D, D), mk(p+"wo", s, 0, D, D), mk(p+"w1", s, 0, D, F), mk(p+"b1", 0, 0, F),
			mk(p+"w2", 1/math.Sqrt(float64(F)), 0, F, D), mk(p+"b2", 0, 0, D))
	}
	return weights.NewSet(a, ts)
}

// TestForwardChild is the child's body; it does nothing in a normal run.
func TestForwardChild(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		t.Skip("runs only as the child of a forward memory measurement")
	}
	L, err := strconv.Atoi(spec)
	if err != nil {
		t.Fatalf("%s=%q: want a token count", childEnv, spec)
	}
	set, err := randomWeights(cpuArch(), 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := native.Load(set)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(L), 4))
	toks := make([]int32, L+1)
	for i := range toks {
		toks[i] = int32(r.IntN(256))
	}
	start, cpu0 := time.Now(), cpuSeconds()
	res, err := m.LogProbs(context.Background(), toks[:L], toks[1:], native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sec, cpu := time.Since(start).Seconds(), cpuSeconds()-cpu0
	var nll float64
	for _, lp := range res.LogProbs {
		nll -= lp
	}
	hwm, err := vmHWM()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("FORWARD L=%d seconds=%.4f cpu_seconds=%.4f vmhwm_kib=%d mean_nll=%.4f\n", L, sec, cpu, hwm, nll/float64(L))
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

// runForwardChild runs one forward of L tokens in a child process.
func runForwardChild(L int) (forwardRun, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestForwardChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", childEnv, L))
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
				r, err := runForwardChild(c.L)
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
	r, err := runForwardChild(c.L)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("L=%d: %.2f s (%.2f CPU-s), %.0f tokens/s, peak RSS %.0f MiB (%s kernels)", c.L, r.seconds, r.cpuSeconds, float64(c.L)/r.seconds, r.peakMiB, native.KernelName())
	if r.peakMiB > c.maxMiB {
		t.Errorf("forward of %d tokens peaked at %.0f MiB, budget %.0f MiB", c.L, r.peakMiB, c.maxMiB)
	}
}

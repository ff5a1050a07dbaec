package model

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"routebench/modelspec"
	"routebench/modelspec/weights"
)

// The GPU issue's "same code path" check: every variant trains on XLA
// through exactly the code it trains with on the CPU (graph, matmul-gradient
// fix, optimizer, host rotations), and the two agree within float32
// tolerance. It needs a PJRT plugin, so it runs only where one is named:
//
//	ROUTEBENCH_XLA_PLUGIN=/abs/path/xla_cuda_plugin.so ./model-xla.test -test.run XLAAgrees -test.v
//
// with a test binary built without the noxla tag (`make gpu-bundle` builds
// bin/model-xla.test). ROUTEBENCH_XLA_PRECISION chooses the tolerances:
// "fp32" (default) for full float32 matmuls (on NVIDIA: NVIDIA_TF32_OVERRIDE=0
// and XLA_FLAGS=--xla_gpu_enable_triton_gemm=false, as scripts/gpu-check.sh
// sets), "tf32" for XLA's default on Ampere and later, whose matmul inputs
// keep 10 mantissa bits (relative rounding ~5e-4 instead of ~6e-8).
const (
	xlaPluginEnv    = "ROUTEBENCH_XLA_PLUGIN"
	xlaPrecisionEnv = "ROUTEBENCH_XLA_PRECISION"
)

// xlaTolerances are relative: the first step's loss (one forward of
// identical parameters on an identical batch: only rounding differs), the
// whole loss curve (rounding differences compound through the updates) and
// the final weights (max |a-b| over max |a|, per tensor).
type xlaTolerances struct{ firstLoss, curve, weights float64 }

var xlaTolerancesByPrecision = map[string]xlaTolerances{
	"fp32": {firstLoss: 1e-5, curve: 1e-3, weights: 1e-3},
	"tf32": {firstLoss: 3e-3, curve: 3e-2, weights: 3e-2},
}

func TestXLAAgreesWithGo(t *testing.T) {
	plugin := os.Getenv(xlaPluginEnv)
	if plugin == "" {
		t.Skipf("set %s to a PJRT plugin (absolute path) and build without -tags noxla to compare XLA with the Go backend", xlaPluginEnv)
	}
	precision := os.Getenv(xlaPrecisionEnv)
	if precision == "" {
		precision = "fp32"
	}
	tol, ok := xlaTolerancesByPrecision[precision]
	if !ok {
		t.Fatalf("%s=%q: want fp32 or tf32", xlaPrecisionEnv, precision)
	}
	const steps = 20
	data := newSynthData(23)
	for _, v := range modelspec.Variants() {
		t.Run(v, func(t *testing.T) {
			c := tinyConfig(t, v, steps)
			c.CheckpointEvery = steps // checkpoints are tested elsewhere; keep the device busy with steps
			goRun := trainOn(t, c, data, "go")
			xla := trainOn(t, c, data, "xla:"+plugin)

			first := relDiff(xla.report.TrainLoss[0], goRun.report.TrainLoss[0])
			curve := 0.0
			for i := range goRun.report.TrainLoss {
				curve = math.Max(curve, relDiff(xla.report.TrainLoss[i], goRun.report.TrainLoss[i]))
			}
			worstW, worstName := 0.0, ""
			for _, a := range goRun.set.Tensors {
				b, err := xla.set.Get(a.Name, a.Shape...)
				if err != nil {
					t.Fatalf("XLA weights: %v", err)
				}
				if d := tensorRelDiff(a.Data, b); d > worstW {
					worstW, worstName = d, a.Name
				}
			}
			t.Logf("%s (%s): first-step loss go %.7f xla %.7f (rel %.2g); loss curve max rel %.2g over %d steps; weights max rel %.2g (%s); step time go %.4f s, xla %.4f s",
				v, precision, goRun.report.TrainLoss[0], xla.report.TrainLoss[0], first, curve, steps, worstW, worstName,
				goRun.speed.StepSeconds, xla.speed.StepSeconds)
			if first > tol.firstLoss {
				t.Errorf("first-step loss differs by %.3g relative (tolerance %g)", first, tol.firstLoss)
			}
			if curve > tol.curve {
				t.Errorf("loss curve differs by up to %.3g relative (tolerance %g)", curve, tol.curve)
			}
			if worstW > tol.weights {
				t.Errorf("final weights differ by %.3g relative in %s (tolerance %g)", worstW, worstName, tol.weights)
			}
		})
	}
}

type trainedRun struct {
	report TrainReport
	speed  SpeedReport
	set    *weights.Set
}

// trainOn trains c on one backend and reads back its outputs.
func trainOn(t *testing.T, c Config, data Data, backend string) trainedRun {
	t.Helper()
	c.Backend = backend
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := trainOnce(t, c, data, filepath.Join(dir, "work"), out); err != nil {
		t.Fatalf("training on %s: %v", backend, err)
	}
	var r trainedRun
	for name, v := range map[string]any{ReportFile: &r.report, SpeedFile: &r.speed} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s on %s: %v", name, backend, err)
		}
	}
	set, err := weights.ReadFile(filepath.Join(out, WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	r.set = set
	if len(r.report.TrainLoss) != c.Steps {
		t.Fatalf("%s: %d losses for %d steps", backend, len(r.report.TrainLoss), c.Steps)
	}
	return r
}

func relDiff(got, want float64) float64 {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.Inf(1)
	}
	return math.Abs(got-want) / math.Max(math.Abs(want), 1e-30)
}

// tensorRelDiff is max |a-b| / max |a|: relative to the tensor's scale, so
// entries near zero do not dominate.
func tensorRelDiff(a, b []float32) float64 {
	var diff, scale float64
	for i := range a {
		diff = math.Max(diff, math.Abs(float64(a[i])-float64(b[i])))
		scale = math.Max(scale, math.Abs(float64(a[i])))
	}
	if scale == 0 {
		return diff
	}
	return diff / scale
}

// TestXLAAgreementMachinery runs the comparison's own plumbing on the Go
// backend twice (where it must report exact agreement), so the GPU check
// cannot fail for a bug of its own.
func TestXLAAgreementMachinery(t *testing.T) {
	c := tinyConfig(t, "random-qkv", 4)
	data := newSynthData(23)
	a := trainOn(t, c, data, "go")
	b := trainOn(t, c, data, "go:ops_sequential,parallelism=0,dotgeneral_large")
	for i := range a.report.TrainLoss {
		if d := relDiff(b.report.TrainLoss[i], a.report.TrainLoss[i]); d != 0 {
			t.Errorf("step %d: executors differ by %g", i, d)
		}
	}
	for i, ta := range a.set.Tensors {
		if d := tensorRelDiff(ta.Data, b.set.Tensors[i].Data); d != 0 {
			t.Errorf("%s: executors differ by %g", ta.Name, d)
		}
	}
	if d := tensorRelDiff([]float32{1, -2, 0}, []float32{1, -2.5, 0.1}); math.Abs(d-0.25) > 1e-9 {
		t.Errorf("tensorRelDiff = %g, want 0.25 (0.5 over scale 2)", d)
	}
}

// Package stepspeed is the pipeline stage that times one optimizer step
// of every variant the profile trains, at the profile's shape, with the
// trainer the plan resolved for it, and records each one's step time and
// its ratio to a baseline variant's (RoPE) for the report. The variants
// are timed in interleaved rounds, each round in a rotated order, so that
// the shared machine's load drifts into every variant alike; a ratio is
// taken within a round. Its figures are measurements: every output file is
// volatile, and it reruns only when the trainers' code or the shape change.
package stepspeed

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"routebench/model"
	"routebench/model/native"
	"routebench/modelspec"
	"routebench/pipeline"
)

// Kind is the stage kind and name.
const Kind = "stepspeed"

// Output files.
const (
	TextFile     = "stepspeed.txt"  // benchfmt, one line per variant and round
	MarkdownFile = "stepspeed.md"   // the report's table
	JSONFile     = "stepspeed.json" // Result
)

// Config says what to time.
type Config struct {
	// Runs holds one training config per variant (the profile's shape and
	// seed, the trainer resolved), in the report's order.
	Runs     []modelspec.Config `json:"runs"`
	Baseline string             `json:"baseline"` // the variant ratios divide by
	Rounds   int                `json:"rounds"`   // interleaved rounds
	Steps    int                `json:"steps"`    // timed steps per variant and round
}

// Result is one variant's figures over the rounds.
type Result struct {
	Variant string    `json:"variant"`
	Trainer string    `json:"trainer"`
	Wall    []float64 `json:"wall_s_per_step"` // per round
	CPU     []float64 `json:"cpu_s_per_step"`  // per round, user + system of the process
	// WallRatio and CPURatio are per round: this variant's time over the
	// baseline's in the same round.
	WallRatio []float64 `json:"wall_ratio"`
	CPURatio  []float64 `json:"cpu_ratio"`
}

// Stage returns the step-time stage.
func Stage(cfg Config) *pipeline.Stage {
	return &pipeline.Stage{
		Name: Kind, Kind: Kind, Config: cfg,
		Code:     []string{"routebench/stages/stepspeed"},
		Volatile: []string{TextFile, MarkdownFile, JSONFile},
		Run:      func(rc *pipeline.RunContext) error { return run(rc, cfg) },
	}
}

func (cfg Config) check() error {
	if cfg.Rounds < 1 || cfg.Steps < 1 || len(cfg.Runs) == 0 {
		return fmt.Errorf("stepspeed: rounds %d, steps %d and %d variants must all be positive (profile fields step_speed_rounds, step_speed_steps)",
			cfg.Rounds, cfg.Steps, len(cfg.Runs))
	}
	for _, c := range cfg.Runs {
		if c.Variant == cfg.Baseline {
			return nil
		}
	}
	return fmt.Errorf("stepspeed: the baseline %q is not among the timed variants; add it to the profile's variants", cfg.Baseline)
}

func run(rc *pipeline.RunContext, cfg Config) error {
	if err := cfg.check(); err != nil {
		return err
	}
	n := len(cfg.Runs)
	total := int64(n + n*cfg.Rounds)
	var done int64
	timers := make([]*model.StepTimer, n)
	defer func() {
		for _, t := range timers {
			if t != nil {
				t.Close()
			}
		}
	}()
	base := 0
	for i, c := range cfg.Runs {
		t, err := model.NewStepTimer(c)
		if err != nil {
			return fmt.Errorf("stepspeed: %s: %w", c.Variant, err)
		}
		timers[i] = t
		if c.Variant == cfg.Baseline {
			base = i
		}
		done++
		rc.Progress(done, total, c.Variant+": built")
	}
	res := make([]Result, n)
	for i, c := range cfg.Runs {
		res[i] = Result{Variant: c.Variant, Trainer: c.TrainerName()}
	}
	var txt strings.Builder
	fmt.Fprintf(&txt, "goos: %s\ngoarch: %s\ncpu: %s\nkernel: %s\npkg: routebench/model\n", runtime.GOOS, runtime.GOARCH, pipeline.CPUModel(), native.KernelName())
	for r := 0; r < cfg.Rounds; r++ {
		for k := 0; k < n; k++ {
			if err := rc.Context.Err(); err != nil {
				return err
			}
			i := (k + r) % n // each round starts one variant later
			wall, cpu, err := timers[i].Time(cfg.Steps)
			if err != nil {
				return fmt.Errorf("stepspeed: round %d: %w", r+1, err)
			}
			res[i].Wall, res[i].CPU = append(res[i].Wall, wall), append(res[i].CPU, cpu)
			fmt.Fprintf(&txt, "BenchmarkTrainStep/variant=%s/trainer=%s-%d\t%d\t%.0f ns/op\t%.4f cpu-s/step\n",
				res[i].Variant, res[i].Trainer, runtime.GOMAXPROCS(0), cfg.Steps, wall*1e9, cpu)
			done++
			rc.Progress(done, total, fmt.Sprintf("round %d of %d: %s", r+1, cfg.Rounds, res[i].Variant))
		}
	}
	for i := range res {
		for r := 0; r < cfg.Rounds; r++ {
			res[i].WallRatio = append(res[i].WallRatio, res[i].Wall[r]/res[base].Wall[r])
			res[i].CPURatio = append(res[i].CPURatio, res[i].CPU[r]/res[base].CPU[r])
		}
	}
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{TextFile: []byte(txt.String()), MarkdownFile: []byte(markdown(cfg, res)), JSONFile: js} {
		if err := os.WriteFile(filepath.Join(rc.OutDir, name), b, 0o644); err != nil {
			return fmt.Errorf("stepspeed: %w", err)
		}
	}
	return nil
}

// markdown is the report's table: medians over rounds, and for the ratios
// the range over rounds, which holds the ratio's median with probability
// 1 - 2^(1-rounds) whatever its distribution (98.4% at 7 rounds).
func markdown(cfg Config, res []Result) string {
	c := cfg.Runs[0]
	var b strings.Builder
	interval := "one round: no interval"
	if cfg.Rounds > 1 {
		interval = fmt.Sprintf("in brackets the range over rounds, a %.1f%% interval for the median ratio", 100*(1-2/float64(uint64(1)<<min(cfg.Rounds, 62))))
	}
	fmt.Fprintf(&b, "One optimizer step of each variant at the profile's shape (d_model %d, %d layers, %d heads, context %d, batch %d), timed in %d interleaved rounds of %d step(s), each round in a rotated order, GOMAXPROCS %d, native kernels `%s`; from initial weights on a fixed random batch. Ratios are to `%s` in the same round; medians over rounds, %s. CPU time (user + system) is the steadier figure on a shared machine.\n\n",
		c.DModel, c.Layers, c.Heads, c.Context, c.Batch, cfg.Rounds, cfg.Steps, runtime.GOMAXPROCS(0), native.KernelName(), cfg.Baseline, interval)
	fmt.Fprintf(&b, "| variant | trainer | s/step | CPU-s/step | CPU / %s | wall / %s |\n|---|---|---|---|---|---|\n", cfg.Baseline, cfg.Baseline)
	for _, r := range res {
		fmt.Fprintf(&b, "| %s | %s | %.4f | %.4f | %s | %s |\n", r.Variant, r.Trainer, median(r.Wall), median(r.CPU), ratio(r.CPURatio), ratio(r.WallRatio))
	}
	return b.String()
}

func ratio(xs []float64) string {
	if len(xs) == 1 {
		return fmt.Sprintf("%.3f", xs[0])
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", median(xs), slices.Min(xs), slices.Max(xs))
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

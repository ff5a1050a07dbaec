// Command routebench runs the routebench pipeline: it reproduces the paper
// "Why Do Accumulated Transformations Extrapolate?" from corpus to
// RESULTS.md, with every stage cached by content. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

const usage = `usage: routebench COMMAND [flags]

commands:
  reproduce            run every stage of a profile and export RESULTS.md
  run STAGE...         run the named stages (by name or kind) and what they need
                       (--only: run one stage alone, as a Slurm job does: its inputs must be
                       in the store, waited for up to --input-wait D; --expect-key K and
                       --expect-recipe R fail it, computing nothing, unless it is the
                       stage the submitter planned)
  status               what is cached, what would run and why
  plan [--json]        the stages by level (stages of a level can run at once); --json adds each
                       one's key (null until its inputs are cached), inputs and the command
                       that runs it alone against the same store, for a scheduler
  sweep --file FILE    run a sweep (a base profile, overrides and axes of --set keys; the
                       points are their cartesian product) and export STUDY-<name>.md
  verify [STAGE...]    recompute (ignoring hits) and fail if a stage's output changed
  gc                   remove store entries that neither a built-in profile uses now nor
                       a recorded run (<store>/runs/*.jsonl) used
                       (--older-than D: run logs older than D stop counting and are
                       deleted; --all: keep only the built-in profiles' current keys)
  results              export RESULTS.md and its files (rewrites only the report, if its inputs are cached)
  gate                 compare the profile's cached results with ci/baseline-<profile>.json
                       (--baseline FILE: another file; --tolerance R: relative tolerance
                       instead of the baseline's, e.g. 0.01 for a GPU run against the CPU's)
  baseline             write the profile's cached results as its baseline (explicit only;
                       --baseline FILE writes there instead)
  cat STAGE [FILE]     print a file of a cached stage's output (without FILE: list its files)
  export STAGE...      write cached train stages as directories PyTorch loads strictly
                       (model.safetensors, config.json, reference.safetensors) into
                       <out>/<stage>, whole or not at all (export --help; docs/interop.md)
  tables [DIR]         write the tidy tables under DIR (default results/: tidy.parquet,
                       train_curves.parquet, each study's) as CSV beside them (--out D: under D
                       instead; docs/interop.md)
  slurm submit|status  run the plan on a Slurm cluster, a job per stage, job arrays for stages
                       of one kind (docs/cluster.md;
                       --wait exports RESULTS.md as reproduce does)
  store check          name every directory of a group-shared store (--store) that a member
                       of its group cannot write, and the fix (docs/cluster.md)
  bench compare OLD NEW
                       compare two benchmark files (benchstat-style)
  bench summary FILE   one run's GFLOP/s figures against its OpenBLAS peak (make bench-speed)

common flags (after the command):
  --profile NAME       smoke | cpu | cpu-v1 | paper (default cpu)
  --config FILE        JSON overrides of the profile's fields
  --set KEY=VALUE      override one field after --config; repeatable. KEY is the JSON path
                       (windows, train.sigma_min, theory.seed) or a training knob's bare name
                       (sigma_min, steps); lists as 1,2,4 or [1,2,4]
  --corpus PATH        the corpus: a file, directory or glob (.txt, .jsonl, .parquet, .xz);
                       repeatable; replaces the profile's corpus field
  --eval-corpus PATH   also evaluate the trained models on this text (file, directory or glob;
                       NAME=PATH names it); repeatable, one evaluation set each; replaces
                       the profile's eval_corpora field; never retrains
  --store DIR          artifact store (default $ROUTEBENCH_STORE or .routebench/store)
  --backend NAME       training backend: go (default) or xla:/abs/path/plugin.so (GPU binary)
  --force STAGE        rerun a stage (name or kind) even if cached; repeatable
  --debug-key          print every line that goes into each stage's key
  --out DIR            where reproduce/results export RESULTS.md, sweep STUDY-<name>.md
                       (default: the repo root)
  --sweep FILE         run, status, verify, plan and cat a sweep's stages instead of a
                       profile's (the file names the profile: no --profile, --config, --set,
                       --corpus with it)
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopProfile, err := startCPUProfile(os.Getenv("ROUTEBENCH_CPUPROFILE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "routebench:", err)
		os.Exit(1)
	}
	err = run(ctx, os.Args[1:])
	stopProfile()
	if err != nil {
		if errors.Is(err, errUsage) {
			fmt.Fprint(os.Stderr, usage)
		}
		fmt.Fprintln(os.Stderr, "routebench:", err)
		os.Exit(exitCode(err))
	}
}

var errUsage = errors.New("see usage above")

// startCPUProfile writes a CPU profile of the whole command to path (the
// environment's ROUTEBENCH_CPUPROFILE; nothing when empty), for `go tool
// pprof` on where a stage's time goes (docs/benchmarks.md). It changes no
// key and no artifact.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("ROUTEBENCH_CPUPROFILE: %w (set it to a writable file path, or unset it)", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("ROUTEBENCH_CPUPROFILE=%s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "routebench: ROUTEBENCH_CPUPROFILE=%s: %v\n", path, err)
		}
	}, nil
}

func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("no command given: %w", errUsage)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "reproduce":
		return cmdReproduce(ctx, rest)
	case "run":
		return cmdRun(ctx, rest)
	case "status":
		return cmdStatus(rest)
	case "verify":
		return cmdVerify(ctx, rest)
	case "gc":
		return cmdGC(rest)
	case "results":
		return cmdResults(ctx, rest)
	case "bench":
		return cmdBench(rest)
	case "gate":
		return cmdGate(rest)
	case "plan":
		return cmdPlan(rest)
	case "sweep":
		return cmdSweep(ctx, rest)
	case "cat":
		return cmdCat(rest)
	case "export":
		return cmdExport(ctx, rest)
	case "baseline":
		return cmdBaseline(rest)
	case "slurm":
		return cmdSlurm(ctx, rest)
	case "store":
		return cmdStore(rest)
	case "tables":
		return cmdTables(rest)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	}
	return fmt.Errorf("unknown command %q: %w", cmd, errUsage)
}

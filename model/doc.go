// Package model is routebench's training loop (Train: batches, checkpoints,
// resume, NaN stop, the export of trained weights in the canonical format
// of package modelspec/weights) and its gomlx transformer, the reference
// trainer and the XLA path. The loop drives either trainer through one seam
// (engine.go): the gomlx graph here, or model/nativetrain on the CPU, as
// Config.Trainer says. The variants, position math and training config it
// implements are defined in package modelspec.
//
// It exists to turn a token source into one trained weights file per
// position-encoding variant, reproducibly: identical inputs (config, data,
// seed) give bit-identical weights.rbw and train.json, also across kills
// and resumes (speed.json is the one volatile output). The
// architecture is specified in modelspec/weights/ARCHITECTURE.md; the native
// evaluator (model/nativeeval) implements the same page, and model/gomlxeval
// (Forward, LogProbsBlockwise) is the gomlx side of the cross-check, built
// from this package's Network. Long-context evaluation is not done here.
//
// API used by the pipeline:
//
//	err = model.Train(ctx, cfg, data, workDir, outDir, progress) // cfg: a modelspec.Config; progress(Progress) after each step
//	// outDir/weights.rbw  (weights.Set, Arch filled; "angles" for accumulated variants)
//	// outDir/train.json   (TrainReport: config, arch, loss curve, held-out losses; deterministic)
//	// outDir/speed.json   (SpeedReport: step time, tokens/s, GFLOP/s, peak RSS; volatile)
//
// Data is the only input: TrainBatch must be a pure function of
// (seed, step, batch, T) and EvalWindows of (seed, L, n), so that a resumed
// run sees the same batches.
//
// Design decisions (details beside the code):
//   - Graphs are plain functions of their inputs (parameters, Adam moments,
//     batch, schedule scalars) rather than a gomlx context: the run state is
//     exactly what a checkpoint stores, and nothing is hidden in an RNG.
//     Initial weights come from a host PCG stream per tensor keyed by
//     (Seed, name); the angle table from modelspec.InitialAngles (zeros or
//     the seeded random table, as the variant says), and each tensor's
//     learning-rate factor from modelspec's Variant.LRScale.
//     Config keys are named by modelspec's Param* constants.
//   - Rotations of rope and random-* are computed on the host in float64
//     (mod 2 pi) and fed as cos/sin; learned-* compute theirs in-graph from the
//     trained table (graph.go's learnedRotation says why float32 is fine there).
//   - AdamW (decay on matrices only), warmup+cosine, global-norm clipping:
//     optimizer.go. Checkpoints: checkpoint.go. Per-variant math: package
//     modelspec (host angles), position_alibi.go (the bias tensor),
//     position_kerple.go (KERPLE's bias, built per block from its trained
//     p and a) and householder_attention.go (PaTH's transport); the
//     forward: graph.go.
//     The loop is train_loop.go; the two trainers behind engine.go are
//     trainer_gomlx.go and trainer_native.go.
//   - Train calls are meant to run one at a time (2 cores); the matmul
//     gradient is installed into gomlx's global VJP table on first use.
//
// What this package must never do: download anything, auto-install XLA
// (build with -tags noxla), write outside workDir/outDir, leave a file in
// outDir after a failed run, or let a gomlx panic cross its API (every entry
// point recovers into an error).
//
// Two gomlx v0.26.0 problems are worked around here:
// the stock DotGeneral gradient materialises an outer product (matmul_vjp.go
// replaces it), and the default simplego executor can deadlock (backend.go
// configures it).
package model

// Package nativetrain trains the model of modelspec/weights/ARCHITECTURE.md
// on the CPU without gomlx: forward and backward passes written out by hand
// on model/native's packed AVX-512 sgemm, and the same AdamW (masked decay,
// global-norm clipping; the schedule comes from the caller) as the gomlx
// trainer in package model.
//
// It exists because gomlx v0.26.0's pure-Go backend trains at ~2% of this
// CPU's sgemm peak. Package model keeps the training loop (batches,
// checkpoints, resume, NaN stop, export) and the gomlx trainer, which stays
// the reference and the GPU (XLA) path; it drives this package through
// Trainer when a config says trainer "native". Initial weights, batches and
// the learning-rate schedule come from package model, so both trainers start
// from the same bits and see the same data.
//
// Every registry variant trains here, PaTH and PaTH-FoX included (householder_steps.go:
// the Householder steps and the gate per position; householder_attention.go: the
// transport chunked into 64-step blocks, each in the gomlx graph's UT form,
// O(T^2 d) per head like the attention; householder_backward.go: its
// backward pass a query block at a time; triangular.go: the blocks'
// inverses), and learned-proj-qkv
// (angleproj.go: each block's angles projected from its normed input, prefix
// sums forward and suffix sums backward, per window), and kerple-log
// (kerple.go: the log bias as a per-head table by distance; its gradient
// the score gradient summed by distance).
//
// Checked against references: every backward piece against float64 finite
// differences (grad_test.go), one step's gradients of every tensor and 200
// steps of loss against the gomlx trainer (model/native_agree_test.go).
//
// Determinism: every reduction has one fixed order that depends on the
// data's shape, never on the workers (matrix products through native.Gemm,
// whose elements are each computed by one tile; bias, gain and embedding
// gradients by fixed column or vocabulary blocks, each summing its rows in
// order; KERPLE's by (window, head) tasks, then windows in order; the gradient norm by fixed chunks summed in order), so the weights
// are bitwise the same for the same inputs whatever the thread timing and
// the number of workers (TestStepsWorkerIndependent).
//
// Speed: BenchmarkStepShapes, BenchmarkStepProtocol and BenchmarkGemmPeak measure it; the
// versions and their figures are in docs/performance-history.md.
package nativetrain

// Package native is the pure-Go evaluator of routebench models: a forward
// pass over one window of up to 65,536+ tokens for weights exported in the
// canonical format (model/weights), exactly as ARCHITECTURE.md specifies,
// for every variant (nope, rope, alibi, random-qk/qkv, learned-qk/qkv; the
// Arch fields Rotation, ValueRot and ALiBi select the behaviour).
//
// It exists because the gomlx model (package model) is for training: its
// forward materialises L x L attention and runs at a few GFLOP/s, which
// rules out long windows. This package must never import gomlx (the
// cross-check against model.Forward lives in a noxla-tagged test) and must
// never hold an L x L or L x V array: attention streams over key blocks
// (online softmax) and logits are formed 48 rows at a time, so memory is
// O(L x d_model) plus O(L x V) only when logits are asked for.
//
// API:
//
//	m, err := native.Load(set)                       // checks names and shapes, packs weights
//	res, err := m.LogProbs(ctx, tokens, targets, native.Options{
//		FarDistances: []int{T, T / 4},               // optional attention diagnostics
//		Workers:      0,                              // 0: GOMAXPROCS
//		ReturnLogits: false,                          // true only for small L (cross-checks)
//	})
//	res.LogProbs[i]  // log p(targets[i] | tokens[0..i]), float64
//	res.Heads        // per layer and head: far-mass and entropy distributions
//
// Speed: built with GOEXPERIMENT=simd on an AVX-512 machine the kernels use
// 16-wide vectors (simd/archsimd); otherwise portable Go kernels with the
// same semantics run, several times slower. KernelName says which.
// Every kernel is tested against a float64 reference before it is
// benchmarked (bench/), with tolerances that scale with magnitude.
package native

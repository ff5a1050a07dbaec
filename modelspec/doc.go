// Package modelspec is the one home of the model facts that the gomlx model
// (package model), the native evaluator (model/nativeeval), the native trainer (model/nativetrain) and the pipeline
// stages share: the variant registry (each variant's rotation family, value
// transport, distance bias and learned parts, and how a learned table starts
// and learns: InitialAngles, Variant.LRScale, which every trainer must use),
// the host-side position math
// (RoPE angles, accumulated prefix sums with their single reduction rule,
// ALiBi slopes, the random angle table), the training configuration and its
// validation, and the files the train stage writes (names and result types).
// The canonical weights format (and the Arch it records) lives in
// modelspec/weights.
//
// It exists so that a fact has one copy: the trainer and the evaluator
// compute positions with the same functions, so they cannot drift.
//
// What it must never do: import gomlx, a backend, or any stage package. It
// is salted into every stage that trains or evaluates, so what lives here is
// only what can change their outputs: result types and file names of the
// stages downstream of training (evaluate, theory, bench, report) live in
// those stages' own packages, so that editing them re-keys no model.
package modelspec

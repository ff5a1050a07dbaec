// Package bench holds the project's performance benchmarks (Go testing.B):
// the native attention kernel against the same attention through gomlx's
// simplego backend, and the native forward's speed and peak memory at long
// windows. It holds no production code; figures come from running
//
//	GOEXPERIMENT=simd go test -tags noxla -run XXX -bench . -benchtime=1x ./bench/
//
// (without GOEXPERIMENT=simd the native kernels are the portable ones, and
// without -tags noxla the gomlx benchmarks are not built).
package bench

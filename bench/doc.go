// Package bench holds the project's performance benchmarks (Go testing.B):
// the native attention kernel against the same attention through gomlx's
// simplego backend, and the native forward's speed and peak memory at long
// windows, at the cpu profile's shape and (opt-in, BenchmarkForwardPaper)
// the paper's. It holds no production code; figures come from `make bench`
// or
//
//	go test -tags noxla -run XXX -bench . -benchtime=1x ./bench/
//
// The native kernels are AVX-512 assembly where the CPU has it (else the
// portable Go ones; the benchmarks log which). Without -tags noxla the
// gomlx benchmarks are not built.
package bench

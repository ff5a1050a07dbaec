// Package hostcal calibrates routebench's cost estimates to the host they
// are printed on: a probe of a few seconds times three things the stages
// spend their time in (the native GEMM, streaming attention at 4,096, a
// rope training step at the cpu profile's shape; planner/cost.Speeds) and,
// when asked, OpenBLAS's 2-thread sgemm peak through bench/openblas, the
// yardstick of the cpu profile's normalised budget. Figures are cached per
// host (CPU model, kernel set, cores) in the user's cache directory, so a
// plan probes once per machine.
//
// It measures and prices; it must never be imported by a stage or change
// a stage's config (an estimate that moved a key would recompute the
// store), and a cache file it cannot trust is a miss, never a figure.
package hostcal

//go:build flopcount

package native

import "sync/atomic"

// FlopCounting reports whether this build counts the packed kernels'
// floating-point operations (the flopcount build tag).
const FlopCounting = true

var executedFlops atomic.Int64

// countFlops adds the 2 m k n operations of one panel product.
func countFlops(m, k, n int) { executedFlops.Add(int64(2 * m * k * n)) }

// ExecutedFlops returns the operations the packed kernels have run since
// the last ResetFlops: what a product computes after the causal
// structure's skipped tiles (Tri), not its dense m k n.
func ExecutedFlops() int64 { return executedFlops.Load() }

// ResetFlops sets the count to 0.
func ResetFlops() { executedFlops.Store(0) }

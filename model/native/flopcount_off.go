//go:build !flopcount

package native

// FlopCounting reports whether this build counts the packed kernels'
// floating-point operations (the flopcount build tag; without it the count
// compiles to nothing and ExecutedFlops is always 0).
const FlopCounting = false

func countFlops(m, k, n int) {}

// ExecutedFlops is 0 without the flopcount build tag.
func ExecutedFlops() int64 { return 0 }

// ResetFlops does nothing without the flopcount build tag.
func ResetFlops() {}

// Package kerneltest runs a test under each micro-kernel set of
// model/native (the portable Go kernels, and the AVX-512 assembly where the
// CPU has it), so that the agreement tests check both kernel sets in one
// test run, not only the one the host picks.
package kerneltest

import (
	"testing"

	"routebench/model/native"
)

// Each runs f as the subtests "portable" and "asm" with that kernel set
// active, restoring the host's set afterwards. "asm" is skipped where the
// assembly is not compiled in (-tags purego, not amd64) or the CPU lacks
// AVX-512. The kernel set is process-wide: f and its callers must not run
// in parallel with other tests of the package that use the kernels.
func Each(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	host := native.SetVectorKernels(false)
	defer native.SetVectorKernels(host)
	t.Run("portable", func(t *testing.T) {
		native.SetVectorKernels(false)
		if native.VectorKernels() {
			t.Fatal("native.SetVectorKernels(false) left the vector kernels on")
		}
		f(t)
	})
	t.Run("asm", func(t *testing.T) {
		if native.SetVectorKernels(true); !native.VectorKernels() {
			t.Skipf("no assembly kernels here (%s): the portable run covers this machine", native.KernelName())
		}
		f(t)
	})
}

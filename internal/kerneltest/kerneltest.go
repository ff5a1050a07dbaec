// Package kerneltest runs a test under each micro-kernel set of
// model/native that the host runs (the portable Go kernels, and the AVX2
// and AVX-512 assembly where the CPU has them), so that the agreement tests
// check every set in one test run, not only the one the host picks.
package kerneltest

import (
	"testing"

	"routebench/model/native"
)

// Each runs f as one subtest per kernel set the host runs ("portable",
// "avx2", "avx512"), with that set active, restoring the host's set
// afterwards. The kernel set is process-wide: f and its callers must not
// run in parallel with other tests of the package that use the kernels.
func Each(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	host := native.KernelSet()
	defer func() {
		if _, err := native.SetKernelSet(host); err != nil {
			t.Errorf("kerneltest: restoring the host's kernel set: %v", err)
		}
	}()
	for _, s := range native.KernelSets() {
		t.Run(s, func(t *testing.T) {
			if _, err := native.SetKernelSet(s); err != nil {
				t.Fatalf("kerneltest: %v", err)
			}
			if got := native.KernelSet(); got != s {
				t.Fatalf("native.SetKernelSet(%q) left %q running", s, got)
			}
			f(t)
		})
	}
}

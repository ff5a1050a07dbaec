// Package corpustest is the one home of what a test does when the default
// corpus (fetched and verified by `make corpus`) is missing: skip on a
// developer's machine, fail under CI, where a missing corpus means the tests
// that need it would silently not run.
package corpustest

import (
	"os"
	"testing"
)

// Missing reports that the default corpus is not available (err says why):
// with the environment variable CI set (non-empty, as .ci/run and CI
// services set it) the test fails with the fix, else it is skipped.
func Missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("default corpus not available (%v): run `make corpus` (CI is set, so this test fails instead of skipping)", err)
		return // Fatalf stops the test; a recording TB's does not
	}
	t.Skipf("default corpus not available (%v): run `make corpus` to run this test", err)
}

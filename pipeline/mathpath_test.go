package pipeline

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"routebench/model/native"
)

// TestMathTermOnThisHost: where Go's math takes the FMA path (amd64 with
// AVX2 and FMA: exactly where model/native runs its AVX2 set) the keys get
// no math term, so fmaMathFingerprint is the one this Go computes; on an
// amd64 CPU without them (qemu-x86_64 -cpu max,-avx2,-fma: make
// avx2-emulated EXPECT=portable) the term is there and names the
// fingerprint, so those results never share keys with the FMA hosts'.
func TestMathTermOnThisHost(t *testing.T) {
	term := mathTerm()
	if runtime.GOARCH != "amd64" {
		if term != "" {
			t.Fatalf("mathTerm on %s = %q, want none (the architecture keeps stores apart)", runtime.GOARCH, term)
		}
		return
	}
	fma := slices.Contains(native.KernelSets(), "avx2")
	t.Logf("kernel sets %v, math fingerprint %s, term %q", native.KernelSets(), mathFingerprint(), term)
	switch {
	case fma && term != "":
		t.Fatalf("this CPU has AVX2 and FMA but the math fingerprint is %s, not fmaMathFingerprint %s: a new Go changed math.Exp's results; set the constant to %s (the Go version in the key re-keys every stage anyway)", mathFingerprint(), fmaMathFingerprint, mathFingerprint())
	case !fma && !strings.Contains(term, mathFingerprint()):
		t.Fatalf("this CPU lacks AVX2 or FMA, so math.Exp takes its other path, but the key's term is %q: such a host's results would share keys with the FMA hosts'", term)
	}
}

// TestMathFingerprintSeesOneBit: the fingerprint changes when one result of
// the grid moves by one ulp, so a path that differs from the FMA path
// anywhere on the grid cannot pass for it.
func TestMathFingerprintSeesOneBit(t *testing.T) {
	vals := mathGrid()
	a := fingerprint(vals)
	vals[len(vals)/2] = math.Nextafter(vals[len(vals)/2], math.Inf(1))
	if fingerprint(vals) == a {
		t.Fatal("a one-ulp change in one value left the fingerprint as it was")
	}
}

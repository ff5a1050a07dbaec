//go:build amd64 && !purego

package native

import "testing"

// TestOnlineSoftmaxNoSubnormalsCanFail: with the assembly exp's old
// constants (clamp at -120, no lane zeroed) checkNoSubnormals finds a
// subnormal probability, so TestOnlineSoftmaxNoSubnormals can fail.
func TestOnlineSoftmaxNoSubnormalsCanFail(t *testing.T) {
	if !avx512Available() {
		t.Skip("no AVX-512: the assembly kernels do not run here")
	}
	saved, savedAsm := softmaxExpConsts, haveAsm
	defer func() { softmaxExpConsts, haveAsm = saved, savedAsm }()
	haveAsm = true
	softmaxExpConsts[0], softmaxExpConsts[9] = -120, -1000
	if err := checkNoSubnormals(); err == nil {
		t.Fatal("with the clamp at -120 and no lane zeroed the check still passes: it cannot fail")
	} else {
		t.Logf("with the old constants: %v", err)
	}
}

package native

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestKernelsEnvChild prints the running set; the parent below runs it in
// a child process under each ROUTEBENCH_KERNELS value.
func TestKernelsEnvChild(t *testing.T) {
	if os.Getenv("ROUTEBENCH_KERNELS_CHILD") == "" {
		t.Skip("run by TestKernelsEnv in a child process")
	}
	t.Logf("running set: %s", KernelName())
}

// TestKernelsEnv: ROUTEBENCH_KERNELS forces each set the host runs (and
// KernelName says so); an unknown name, or a set the host cannot run, stops
// the process at start-up with an error that names the variable and what
// the host runs. SetKernelSet refuses what the host cannot run.
func TestKernelsEnv(t *testing.T) {
	child := func(val string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKernelsEnvChild$", "-test.v")
		cmd.Env = append(os.Environ(), "ROUTEBENCH_KERNELS_CHILD=1", KernelsEnv+"="+val)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	names := map[string]string{"portable": "portable Go", "avx2": "avx2 assembly", "avx512": "avx512 assembly"}
	for _, s := range []kernelSet{setPortable, setAVX2, setAVX512} {
		out, err := child(s.String())
		if runnable(s) {
			if err != nil || !strings.Contains(out, "running set: "+names[s.String()]) {
				t.Errorf("%s=%s: want the %s set running, got (%v)\n%s", KernelsEnv, s, s, err, out)
			}
			continue
		}
		if err == nil || !strings.Contains(out, "cannot run here") {
			t.Errorf("%s=%s on a host without it: want a start-up error, got (%v)\n%s", KernelsEnv, s, err, out)
		}
		if _, err := SetKernelSet(s.String()); err == nil {
			t.Errorf("SetKernelSet(%s) accepted a set this host cannot run", s)
		}
	}
	out, err := child("avx1024")
	if err == nil || !strings.Contains(out, KernelsEnv+"=avx1024") || !strings.Contains(out, "unknown kernel set") {
		t.Errorf("%s=avx1024: want a start-up error naming the variable, got (%v)\n%s", KernelsEnv, err, out)
	}
	if _, err := SetKernelSet("avx1024"); err == nil {
		t.Error("SetKernelSet accepted an unknown set")
	}
}

package native

import (
	"fmt"
	"os"
	"strings"
)

// The kernel sets and the start-up choice among them. Every set computes
// each output by the same sequence of float32 operations (kern_canon.go
// holds the portable form of that sequence; TestKernelSetsBitwise compares
// every pair of sets the host runs), so the choice changes the speed, never
// the bits: a store filled on an AVX-512 laptop and on an AVX2 server holds
// one kind of bytes for one key.

// kernelSet names one set of micro-kernels.
type kernelSet int

const (
	setPortable kernelSet = iota // Go (kern_canon.go, kern_generic.go): every CPU, -tags purego
	setAVX2                      // AVX2 + FMA assembly (kern_avx2_amd64.s): x86-64-v3
	setAVX512                    // AVX-512F assembly (kern_amd64.s)
)

// KernelsEnv names the environment variable that forces a kernel set at
// start-up (avx512, avx2 or portable), for tests and benchmarks that
// measure one set on a host that runs a faster one.
const KernelsEnv = "ROUTEBENCH_KERNELS"

var setNames = [...]string{setPortable: "portable", setAVX2: "avx2", setAVX512: "avx512"}

func (s kernelSet) String() string { return setNames[s] }

// runnable reports whether this build and CPU (and OS) can run set s.
func runnable(s kernelSet) bool {
	switch s {
	case setAVX512:
		return avx512Available()
	case setAVX2:
		return avx2Available()
	}
	return true
}

// bestSet is the fastest set the host runs: AVX-512, else AVX2 + FMA,
// else portable.
func bestSet() kernelSet {
	for _, s := range []kernelSet{setAVX512, setAVX2} {
		if runnable(s) {
			return s
		}
	}
	return setPortable
}

// runnableSets lists the sets the host runs, slowest first.
func runnableSets() []kernelSet {
	var out []kernelSet
	for s := setPortable; s <= setAVX512; s++ {
		if runnable(s) {
			out = append(out, s)
		}
	}
	return out
}

func parseSet(name string) (kernelSet, error) {
	for s, n := range setNames {
		if strings.EqualFold(strings.TrimSpace(name), n) {
			return kernelSet(s), nil
		}
	}
	return 0, fmt.Errorf("unknown kernel set %q (want one of %s)", name, strings.Join(setNames[:], ", "))
}

// choose is the set a kernel-set name (empty: the best) asks for, or an
// error naming what the host can run instead.
func choose(name string) (kernelSet, error) {
	if name == "" {
		return bestSet(), nil
	}
	s, err := parseSet(name)
	if err != nil {
		return 0, err
	}
	if !runnable(s) {
		var can []string
		for _, r := range runnableSets() {
			can = append(can, r.String())
		}
		return 0, fmt.Errorf("kernel set %s cannot run here (%s; this host runs %s)", s, whyNot(s), strings.Join(can, ", "))
	}
	return s, nil
}

// kset is the running set; haveAsm and useAVX2 are its two branches that
// the dispatching kernels test (one branch per block, not per element).
var kset = startupSet()

var haveAsm, useAVX2 = kset != setPortable, kset == setAVX2

// startupSet is the best set, or the one ROUTEBENCH_KERNELS names. A set
// the host cannot run stops the process at start-up: a benchmark or test
// that asked for AVX2 must not silently measure something else.
func startupSet() kernelSet {
	s, err := choose(os.Getenv(KernelsEnv))
	if err != nil {
		panic(fmt.Sprintf("native: %s=%s: %v: unset %s or name a set this host runs", KernelsEnv, os.Getenv(KernelsEnv), err, KernelsEnv))
	}
	return s
}

func setKernels(s kernelSet) (was kernelSet) {
	was = kset
	kset = s
	haveAsm, useAVX2 = s != setPortable, s == setAVX2
	return was
}

// KernelName says which micro-kernels a process uses, for benchmark logs
// and the speed stages' reports.
func KernelName() string {
	switch kset {
	case setAVX512:
		return "avx512 assembly"
	case setAVX2:
		return "avx2 assembly"
	}
	return "portable Go"
}

// KernelSet is the running set's short name: avx512, avx2 or portable (the
// values ROUTEBENCH_KERNELS takes).
func KernelSet() string { return kset.String() }

// KernelSets lists the sets this host runs (short names, slowest first).
func KernelSets() []string {
	var out []string
	for _, s := range runnableSets() {
		out = append(out, s.String())
	}
	return out
}

// SetKernelSet switches to the named set (short name) and returns the
// previous one's name: for tests and benchmarks that compare the sets,
// never for production paths (the switch is process-wide, not
// synchronised with running kernels). A set the host cannot run is refused
// with an error and changes nothing.
func SetKernelSet(name string) (was string, err error) {
	s, err := choose(name)
	if err != nil || name == "" {
		if err == nil {
			err = fmt.Errorf("native.SetKernelSet: empty set name (want one of %s)", strings.Join(KernelSets(), ", "))
		}
		return kset.String(), err
	}
	return setKernels(s).String(), nil
}

// SetVectorKernels switches to the host's best vector set (on) or the
// portable kernels (off) and returns whether a vector set ran before: for
// tests and benchmarks, never for production paths.
func SetVectorKernels(on bool) (was bool) {
	was = haveAsm
	s := setPortable
	if on {
		s = bestSet()
	}
	setKernels(s)
	return was
}

// VectorKernels reports whether a vector kernel set is active (else the
// portable Go kernels, several times slower, run).
func VectorKernels() bool { return haveAsm }

package hostcal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"

	"routebench/model/native"
	"routebench/pipeline"
)

// Host is what a calibration is valid for: the CPU model (/proc/cpuinfo's
// "model name"), the kernel set that runs (model/native.KernelName: an
// AVX2 and an AVX-512 host can share a model name, "AMD EPYC" in a VM),
// the cores the stages use (GOMAXPROCS: the probe runs on all of them, as
// the stages do) and the code it timed (the code salt of the kernelspeed
// and stepspeed stages, whose kernels and trainer the probe runs: a faster
// kernel makes the old figures stale, as it re-keys those stages).
type Host struct {
	CPUModel string `json:"cpu_model"`
	Kernels  string `json:"kernels"`
	Cores    int    `json:"cores"`
	Code     string `json:"code"`
}

// probedCode is the stages whose code the probe runs.
var probedCode = []string{"routebench/stages/kernelspeed", "routebench/stages/stepspeed"}

// Current is the host this process runs on. Its Code is "unknown" where
// the binary cannot hash its own source (a calibration is then keyed by
// the CPU and kernel set alone).
func Current() Host {
	code := "unknown"
	if salt, _, err := pipeline.CodeSalt(probedCode); err == nil {
		code = salt[:12]
	}
	return Host{CPUModel: pipeline.CPUModel(), Kernels: native.KernelName(), Cores: runtime.GOMAXPROCS(0), Code: code}
}

// Key names h's cache file: a hash of its fields and the cache format, so
// that a file name can be trusted as far as the key goes and a new format
// never reads an old file. The file repeats the fields; Load checks them.
func (h Host) Key() string {
	sum := sha256.Sum256(fmt.Appendf(nil, "routebench host calibration %d\x00%s\x00%s\x00%d\x00%s", Format, h.CPUModel, h.Kernels, h.Cores, h.Code))
	return hex.EncodeToString(sum[:8])
}

func (h Host) String() string {
	return fmt.Sprintf("%s, kernels %s, %d cores, code %s", h.CPUModel, h.Kernels, h.Cores, h.Code)
}

// Package procstat reads this process's resource use, for the training
// and benchmark figures that report peak resident memory and CPU time: the
// one home of the /proc and getrusage reading they need.
package procstat

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// PeakRSS is the resident-set high-water mark in bytes (VmHWM, Linux), or
// 0 where the kernel does not report it.
func PeakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// ResetPeakRSS returns freed memory to the kernel and restarts the
// high-water mark (Linux: writing 5 to clear_refs), so that a benchmark of
// several shapes reports each one's own peak. Elsewhere it does nothing.
func ResetPeakRSS() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// CPUSeconds is the process's user + system time so far, in seconds (0
// where getrusage fails): on a shared machine the steadier cost than wall
// time.
func CPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

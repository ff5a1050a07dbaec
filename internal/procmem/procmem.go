// Package procmem reads this process's memory high-water mark, for the
// training and benchmark figures that report peak resident memory. It is
// the one home of the /proc parsing both need.
package procmem

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
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

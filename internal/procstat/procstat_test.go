package procstat

import (
	"runtime"
	"testing"
	"time"
)

// Touching 64 MiB must raise the high-water mark by about that much: the
// parse reads the right field in the right unit.
func TestPeakRSSSeesAnAllocation(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("VmHWM is Linux's")
	}
	before := PeakRSS()
	if before <= 0 {
		t.Fatalf("PeakRSS() = %d on Linux", before)
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	after := PeakRSS()
	runtime.KeepAlive(buf)
	if d := after - before; d < 48<<20 || d > 256<<20 {
		t.Errorf("peak RSS grew by %d bytes after touching 64 MiB (want ~64 MiB)", d)
	}
}

// Spinning for 50 ms of wall time must add about that much CPU time.
func TestCPUSecondsCounts(t *testing.T) {
	c0 := CPUSeconds()
	for t0 := time.Now(); time.Since(t0) < 50*time.Millisecond; {
	}
	if d := CPUSeconds() - c0; d < 0.02 || d > 1 {
		t.Errorf("50 ms of spinning added %.3f CPU-s", d)
	}
}

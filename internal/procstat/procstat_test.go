package procstat

import (
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
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

// CPUSeconds must agree with an independent clock of the same quantity:
// /proc/self/stat's utime + stime, in clock ticks. The test spins until
// that clock has advanced by 0.2 CPU-s, however long a busy machine makes
// it take in wall time, so it never needs a quiet machine.
func TestCPUSecondsCounts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/self/stat is Linux's")
	}
	c0, p0 := CPUSeconds(), procStatCPU(t)
	deadline := time.Now().Add(2 * time.Minute)
	for procStatCPU(t)-p0 < 0.2 {
		if time.Now().After(deadline) {
			t.Fatal("2 minutes of spinning gave under 0.2 CPU-s by /proc/self/stat")
		}
		for i := 0; i < 1e5; i++ {
			spinSink += i
		}
	}
	d, want := CPUSeconds()-c0, procStatCPU(t)-p0
	// Both clocks tick at 1/USER_HZ (10 ms) or finer: allow a few ticks.
	if math.Abs(d-want) > 0.05 {
		t.Errorf("CPUSeconds advanced %.3f CPU-s while /proc/self/stat advanced %.3f", d, want)
	}
}

var spinSink int

// procStatCPU is utime + stime from /proc/self/stat (fields 14 and 15,
// after the parenthesised command name), at USER_HZ = 100.
func procStatCPU(t *testing.T) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, err1 := strconv.ParseFloat(f[11], 64)
	k, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/self/stat: utime %q stime %q", f[11], f[12])
	}
	return (u + k) / 100
}

package hostcal

import (
	"testing"
	"time"
)

// The probe measures this host in seconds and gives figures a calibration
// accepts, in the order the kernels allow: streaming attention (softmax
// and rotations between its products) below the GEMM's peak.
func TestProbe(t *testing.T) {
	if testing.Short() {
		t.Skip("times the kernels for a few seconds")
	}
	start := time.Now()
	s, err := Probe()
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %+v in %s", Current(), s, took.Round(time.Millisecond))
	if s.AttentionGFLOPs > 1.2*s.GemmGFLOPs {
		t.Errorf("attention %.1f GFLOP/s above the GEMM's peak %.1f: the probe's flop counts are off", s.AttentionGFLOPs, s.GemmGFLOPs)
	}
	if took > probeBudget+time.Minute {
		t.Errorf("the probe took %s, want about %s at most", took, probeBudget)
	}
}

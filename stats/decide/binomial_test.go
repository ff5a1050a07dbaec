package decide

import (
	"math"
	"testing"

	"routebench/stats"
)

// TestBinomialHalfP against hand sums: P(Bin(10, 1/2) >= 8) = (45 + 10 +
// 1) / 1024, >= 0 is 1, >= 10 is 1/1024; a large n stays finite and
// matches the normal approximation; bad input is NaN.
func TestBinomialHalfP(t *testing.T) {
	for _, c := range []struct {
		k, n int
		want float64
	}{{8, 10, 56.0 / 1024}, {0, 10, 1}, {10, 10, 1.0 / 1024}, {5, 10, 638.0 / 1024}, {1, 1, 0.5}} {
		if got := BinomialHalfP(c.k, c.n); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("P(Bin(%d, 1/2) >= %d) = %.15g, want %.15g", c.n, c.k, got, c.want)
		}
	}
	// n = 4000, k = 2100: z = (2099.5 - 2000) / sqrt(1000) = 3.146, tail 8.3e-4
	if got := BinomialHalfP(2100, 4000); math.Abs(got-8.27e-4)/8.27e-4 > 0.02 {
		t.Errorf("P(Bin(4000, 1/2) >= 2100) = %.4g, want about 8.27e-4 (normal approximation)", got)
	}
	for _, c := range [][2]int{{3, 0}, {-1, 4}, {5, 4}} {
		if got := BinomialHalfP(c[0], c[1]); !math.IsNaN(got) {
			t.Errorf("P(Bin(%d, 1/2) >= %d) = %v, want NaN", c[1], c[0], got)
		}
	}
}

// TestClopperPearson: 8 of 10 gives [0.444, 0.975] (the textbook exact
// interval); 0 of n starts at 0 and n of n ends at 1.
func TestClopperPearson(t *testing.T) {
	if stats.Confidence != 0.95 {
		t.Skip("the references are 95% intervals")
	}
	e := ClopperPearson(8, 10, "units")
	if math.Abs(e.Lo-0.4439) > 1e-3 || math.Abs(e.Hi-0.9748) > 1e-3 || e.Mean != 0.8 {
		t.Errorf("8/10: %.4f [%.4f, %.4f], want 0.8 [0.4439, 0.9748]", e.Mean, e.Lo, e.Hi)
	}
	if z, a := ClopperPearson(0, 5, ""), ClopperPearson(5, 5, ""); z.Lo != 0 || a.Hi != 1 || math.Abs(z.Hi-0.5218) > 1e-3 {
		t.Errorf("0/5 [%.4f, %.4f], 5/5 [%.4f, %.4f]; want [0, 0.5218] and [0.4782, 1]", z.Lo, z.Hi, a.Lo, a.Hi)
	}
}

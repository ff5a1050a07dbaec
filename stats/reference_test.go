package stats

import (
	"math"
	"testing"
)

// The numbers below are stats/testdata/reference.py's output (python3
// standard library: its own t quantile, means and logs); run it to
// reproduce them.
const (
	refT975n2        = 12.7062047362
	refT975n3        = 4.30265272975
	refPrefixRatio   = 0.598996214851
	refDetectable    = 1.16745423117
	refSeedsToSettle = 24
)

func relClose(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Abs(b) }

func TestAgainstReference(t *testing.T) {
	if !relClose(TQuantile(2), refT975n2, 1e-9) || !relClose(TQuantile(3), refT975n3, 1e-9) {
		t.Fatalf("t quantiles %v, %v; reference %v, %v", TQuantile(2), TQuantile(3), refT975n2, refT975n3)
	}
	g := GeoOverSeeds([]float64{1.2, 1.3, 1.5})
	if !relClose(g.Mean, 1.32761439426, 1e-9) || !relClose(g.Lo, 1.00256263127, 1e-9) || !relClose(g.Hi, 1.75805473381, 1e-9) || !relClose(g.SD, 0.113046989489, 1e-9) {
		t.Fatalf("GeoOverSeeds(1.2, 1.3, 1.5) = %+v; reference 1.32761439426 [1.00256263127, 1.75805473381] sd 0.113046989489", g)
	}

	// The paired prefix ratio of two windows of 8 positions at T = 2.
	losses := [][]float64{{3.0, 2.5, 2.0, 2.2, 1.9, 2.1, 1.8, 2.0}, {2.8, 2.6, 2.4, 2.0, 2.3, 1.7, 2.2, 1.9}}
	var all, prefix []float64
	for _, w := range losses {
		all, prefix = append(all, Mean(w)), append(prefix, Mean(w[:2]))
	}
	pr, err := PairedRatioInterval(all, prefix)
	if err != nil || !relClose(pr.Value, refPrefixRatio, 1e-12) || !(pr.Lo <= pr.Value && pr.Value <= pr.Hi) {
		t.Fatalf("prefix ratio %v (%v); reference %v", pr, err, refPrefixRatio)
	}

	p, err := PairedOverSeeds([][]float64{{0.10, 0.20, 0.15}, {0.05, 0.10, 0.12}, {0.20, 0.18, 0.25}})
	if err != nil || !relClose(p.Mean, 1.16183424273, 1e-9) || !relClose(p.Lo, 1.00095219034, 1e-9) || !relClose(p.Hi, 1.34857470777, 1e-9) {
		t.Fatalf("PairedOverSeeds = %+v (%v); reference 1.16183424273 [1.00095219034, 1.34857470777]", p, err)
	}

	if d := math.Exp(DetectableLogEffect(0.05, 3)); !relClose(d, refDetectable, 1e-9) {
		t.Fatalf("detectable x%v; reference x%v", d, refDetectable)
	}
	if n := SeedsToSettle(0.05, 0.03); n != refSeedsToSettle {
		t.Fatalf("SeedsToSettle(0.05, 0.03) = %d; reference %d", n, refSeedsToSettle)
	}
}

// Pairing: two models whose windows differ in difficulty by the same
// amount have an exact paired ratio (zero-width interval), where the
// unpaired ratio of the same numbers has a wide one.
func TestPairingRemovesWindowDifficulty(t *testing.T) {
	b := []float64{1.0, 3.0, 2.0, 2.5, 1.5}
	a := make([]float64, len(b))
	for i := range b {
		a[i] = b[i] + 0.1
	}
	p, err := PairedRatioInterval(a, b)
	if err != nil || !relClose(p.Value, math.Exp(0.1), 1e-12) || !relClose(p.Lo, p.Value, 1e-12) || !relClose(p.Hi, p.Value, 1e-12) {
		t.Fatalf("paired %v (%v), want exactly e^0.1", p, err)
	}
	if u := RatioInterval(a, b); u.Hi-u.Lo < 0.5 {
		t.Fatalf("unpaired interval %v is narrow; the windows' spread should show", u)
	}
	if _, err := PairedRatioInterval(a, b[:3]); err == nil {
		t.Fatal("unequal window counts were paired")
	}
	one, err := PairedOverSeeds([][]float64{{0.1, 0.1}})
	if err != nil || one.N != 1 || !relClose(one.Mean, math.Exp(0.1), 1e-12) || math.IsNaN(one.Lo) {
		t.Fatalf("one seed: %+v (%v), want the window bootstrap", one, err)
	}
}

func TestWindowsToSettle(t *testing.T) {
	// Half-width 0.2 from 16 windows (per-window sd 0.2 x 4 / t(15)); 80%
	// power for 0.1 takes 113 windows (reference.py), not the 64 that
	// reading the half-width as the detectable effect gave.
	if n := WindowsToSettle(0.2, 0.1, 16); n != 113 {
		t.Fatalf("WindowsToSettle = %d, want 113 (reference.py)", n)
	}
	if n := WindowsToSettle(0.2, 0.1, 1); n <= MaxSeeds {
		t.Fatalf("one window: %d, want more than %d (no spread to plan from)", n, MaxSeeds)
	}
}

package stats

import (
	"math"
	"testing"
)

func TestPPLIntervalCoversAndShrinks(t *testing.T) {
	losses := []float64{2.0, 2.1, 1.9, 2.05, 1.95, 2.0, 2.02, 1.98}
	iv := PPLInterval(losses)
	if math.Abs(iv.Value-math.Exp(2.0)) > 1e-12 {
		t.Fatalf("ppl %v, want e^2", iv.Value)
	}
	if !(iv.Lo < iv.Value && iv.Value < iv.Hi) {
		t.Fatalf("interval %v does not bracket its value", iv)
	}
	// A constant sample has a zero-width interval.
	c := PPLInterval([]float64{1, 1, 1, 1})
	if c.Lo != c.Value || c.Hi != c.Value {
		t.Fatalf("constant sample: %v", c)
	}
	if PPLInterval(losses) != iv {
		t.Fatal("bootstrap is not deterministic for a fixed seed")
	}
}

func TestRatioInterval(t *testing.T) {
	base := []float64{2, 2, 2, 2}
	long := []float64{2.5, 2.5, 2.5, 2.5}
	iv := RatioInterval(long, base)
	want := math.Exp(0.5)
	if math.Abs(iv.Value-want) > 1e-12 || math.Abs(iv.Lo-want) > 1e-12 || math.Abs(iv.Hi-want) > 1e-12 {
		t.Fatalf("ratio %v, want %v exactly", iv, want)
	}
	noisy := RatioInterval([]float64{2.4, 2.6, 2.5, 2.45, 2.55}, []float64{1.9, 2.1, 2.0, 2.05, 1.95})
	if !(noisy.Lo < want && want < noisy.Hi) {
		t.Fatalf("noisy ratio interval %v misses %v", noisy, want)
	}
}

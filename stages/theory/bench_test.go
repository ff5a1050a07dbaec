package theory

import "testing"

func BenchmarkExpSkewAdvance8(b *testing.B) {
	s := newStepper(StepFamily{Kind: "expskew", Dim: 8, Scale: 0.5})
	st := make([]float64, s.stateLen())
	s.reset(st)
	rng := newRNG(1)
	for b.Loop() {
		s.advance(rng, st)
	}
}

func BenchmarkHouseholderAdvance16(b *testing.B) {
	s := newStepper(StepFamily{Kind: "householder", Dim: 16})
	st := make([]float64, s.stateLen())
	s.reset(st)
	rng := newRNG(1)
	for b.Loop() {
		s.advance(rng, st)
	}
}

func BenchmarkHaar32(b *testing.B) {
	rng := newRNG(1)
	for b.Loop() {
		haarOrthogonal(rng, 32)
	}
}

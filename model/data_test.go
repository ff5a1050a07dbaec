package model

import (
	"fmt"
	"math/rand/v2"
)

// synthData is a deterministic token source for tests: a fixed random
// first-order Markov chain with a few likely successors per token, so a
// model can learn something within tens of steps.
type synthData struct {
	vocab int
	next  [][]int32
}

func newSynthData(vocab int) *synthData {
	rng := rand.New(rand.NewPCG(7, 7))
	d := &synthData{vocab: vocab, next: make([][]int32, vocab)}
	for i := range d.next {
		for k := 0; k < 3; k++ {
			d.next[i] = append(d.next[i], int32(rng.IntN(vocab)))
		}
	}
	return d
}

func (d *synthData) window(rng *rand.Rand, n int) []int32 {
	w := make([]int32, n)
	w[0] = int32(rng.IntN(d.vocab))
	for i := 1; i < n; i++ {
		if rng.IntN(10) == 0 {
			w[i] = int32(rng.IntN(d.vocab))
		} else {
			w[i] = d.next[w[i-1]][rng.IntN(3)]
		}
	}
	return w
}

func (d *synthData) TrainBatch(seed uint64, step, batch, T int) (in, tgt []int32, err error) {
	rng := rand.New(rand.NewPCG(seed, uint64(step)))
	for b := 0; b < batch; b++ {
		w := d.window(rng, T+1)
		in = append(in, w[:T]...)
		tgt = append(tgt, w[1:]...)
	}
	return in, tgt, nil
}

func (d *synthData) EvalWindows(seed uint64, L, n int) ([][]int32, error) {
	if L <= 0 || n <= 0 {
		return nil, fmt.Errorf("synthData: bad L=%d n=%d", L, n)
	}
	rng := rand.New(rand.NewPCG(seed, 1<<40))
	out := make([][]int32, n)
	for i := range out {
		out[i] = d.window(rng, L+1)
	}
	return out, nil
}

package nativetrain

// arena hands out a step's activation and gradient buffers and keeps them
// for the next step: a step's sequence of requests is the same every step,
// so after the first one nothing is allocated (fresh buffers for each were
// ~15% of a step in allocation, zeroing and GC). Used only from the
// goroutine that runs the step, never inside a parallel loop.
type arena struct {
	bufs [][]float32
	next int
}

// reset makes every buffer available again (at the start of a step).
func (a *arena) reset() { a.next = 0 }

// raw returns n floats with arbitrary contents, for outputs that are
// written in full before they are read.
func (a *arena) raw(n int) []float32 {
	if a.next == len(a.bufs) {
		a.bufs = append(a.bufs, nil)
	}
	b := a.bufs[a.next]
	if cap(b) < n {
		b = make([]float32, n)
		a.bufs[a.next] = b
	}
	a.next++
	return b[:n]
}

// zeros returns n zeroed floats, for accumulators.
func (a *arena) zeros(n int) []float32 {
	b := a.raw(n)
	clear(b)
	return b
}

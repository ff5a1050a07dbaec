package nativeeval

import "sync"

// scratchPool recycles one kind of worker scratch between parallel tasks,
// layers and windows: fresh pages for every call were a few percent of a
// short window's attention. Scratch is made for a head dimension d; get
// returns a kept one that fits d, or a new one. Its users overwrite what
// they read, so which scratch a task gets never changes a result.
type scratchPool[T any] struct {
	p    sync.Pool
	make func(d int) T
	fits func(x T, d int) bool
}

func newScratchPool[T any](make func(d int) T, fits func(x T, d int) bool) *scratchPool[T] {
	return &scratchPool[T]{make: make, fits: fits}
}

func (sp *scratchPool[T]) get(d int) T {
	if x, ok := sp.p.Get().(T); ok && sp.fits(x, d) {
		return x
	}
	return sp.make(d)
}

func (sp *scratchPool[T]) put(x T) { sp.p.Put(x) }

package model

import (
	"fmt"

	"time"

	"routebench/internal/procstat"
	"routebench/internal/seeds"
)

// StepTimer times optimizer steps of one configuration, from its initial
// weights on one fixed batch of seeded random tokens, for the stepspeed
// stage's step-time comparisons. It measures; it trains nothing anyone
// keeps. The step's cost does not depend on the tokens' values, so a
// random batch times what a corpus batch would.
type StepTimer struct {
	c        Config
	e        engine
	tok, tgt []int32
	s        int
}

// NewStepTimer builds c's trainer (c.Trainer resolved as in Train), sets
// its initial weights and takes one untimed step, which fills the
// trainer's buffers and compiles gomlx's graph.
func NewStepTimer(c Config) (*StepTimer, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	e, err := newEngine(c)
	if err != nil {
		return nil, err
	}
	specs := paramSpecs(c)
	zeros := make([][]float32, len(specs))
	for i, s := range specs {
		zeros[i] = make([]float32, size(s.Shape))
	}
	e.setState(initParams(c, specs), zeros, zeros)
	r := seeds.Rand(c.Seed, seeds.StepTimer)
	n := c.Batch * c.Context
	st := &StepTimer{c: c, e: e, tok: make([]int32, n), tgt: make([]int32, n)}
	for i := range st.tok {
		st.tok[i], st.tgt[i] = int32(r.IntN(c.Vocab)), int32(r.IntN(c.Vocab))
	}
	if _, _, err := st.Time(1); err != nil {
		e.close()
		return nil, err
	}
	return st, nil
}

// Time runs n steps and returns their mean wall time and mean CPU time
// (user + system of the whole process) per step, in seconds.
func (st *StepTimer) Time(n int) (wall, cpu float64, err error) {
	if n <= 0 {
		return 0, 0, fmt.Errorf("model: timing %s: %d steps, want at least 1", st.c.Variant, n)
	}
	cpu0, t0 := procstat.CPUSeconds(), time.Now()
	for i := 0; i < n; i++ {
		if _, _, err := st.e.runStep(st.s%st.c.Steps, st.tok, st.tgt); err != nil {
			return 0, 0, fmt.Errorf("model: timing %s: %w", st.c.Variant, err)
		}
		st.s++
	}
	return time.Since(t0).Seconds() / float64(n), (procstat.CPUSeconds() - cpu0) / float64(n), nil
}

// Close releases the trainer.
func (st *StepTimer) Close() { st.e.close() }

package model

import (
	"fmt"

	"routebench/modelspec"
)

// engine is what the training loop (Train) needs from a trainer: one
// optimizer step, the held-out loss, and the state a checkpoint stores.
// Two implement it: the gomlx trainer (trainer_gomlx.go; the reference and the
// XLA path) and the native one (trainer_native.go over model/nativetrain), chosen by
// Config.Trainer. The loop, the initial weights, the batches and the
// schedule are shared, so the two differ only in arithmetic.
type engine interface {
	runStep(s int, tokens, targets []int32) (loss, gnorm float32, err error)
	evalLoss(windows [][]int32) (float64, error)
	setState(params, m, v [][]float32)
	state() (params, m, v [][]float32, err error)
	close()
}

func newEngine(c Config) (engine, error) {
	switch c.TrainerName() {
	case modelspec.TrainerNative:
		return newNativeEngine(c)
	case modelspec.TrainerGomlx:
		return newTrainer(c)
	}
	return nil, fmt.Errorf("model: training %s: unknown trainer %q (want %q or %q)", c.Variant, c.Trainer, modelspec.TrainerNative, modelspec.TrainerGomlx)
}

// heldOutLoss is both trainers' held-out loss: the mean over batches of
// Batch windows (Context+1 tokens each; a last partial batch is left out)
// of each batch's mean loss, so that the two report the same quantity.
func heldOutLoss(c modelspec.Config, windows [][]int32, batchLoss func(tokens, targets []int32) (float32, error)) (float64, error) {
	B, T := c.Batch, c.Context
	var sum float64
	nb := 0
	for start := 0; start+B <= len(windows); start += B {
		tok := make([]int32, 0, B*T)
		tgt := make([]int32, 0, B*T)
		for _, w := range windows[start : start+B] {
			tok = append(tok, w[:T]...)
			tgt = append(tgt, w[1:T+1]...)
		}
		l, err := batchLoss(tok, tgt)
		if err != nil {
			return 0, fmt.Errorf("model: %s held-out batch %d: %w", c.Variant, nb, err)
		}
		sum += float64(l)
		nb++
	}
	if nb == 0 {
		return 0, fmt.Errorf("model: %s: fewer than %d held-out windows", c.Variant, B)
	}
	return sum / float64(nb), nil
}

func (e *nativeEngine) setState(params, m, v [][]float32) {
	if err := e.tr.SetState(params, m, v); err != nil {
		panic(err) // the loop builds the state from paramSpecs: a mismatch is a bug
	}
}

func (e *nativeEngine) state() (params, m, v [][]float32, err error) {
	params, m, v = e.tr.State()
	return params, m, v, nil
}

func (e *nativeEngine) close() {}

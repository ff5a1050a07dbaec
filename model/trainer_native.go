package model

import (
	"fmt"

	"routebench/model/nativetrain"
)

// nativeEngine adapts nativetrain.Trainer to the loop.
type nativeEngine struct {
	c  Config
	tr *nativetrain.Trainer
}

// nativeParams is paramSpecs in nativetrain's terms.
func nativeParams(c Config) []nativetrain.Param {
	var ps []nativetrain.Param
	for _, s := range paramSpecs(c) {
		ps = append(ps, nativetrain.Param{Name: s.Name, Shape: s.Shape, Decay: s.Decay, LRScale: s.LRScale})
	}
	return ps
}

func newNativeEngine(c Config) (*nativeEngine, error) {
	tr, err := nativetrain.New(c, nativeParams(c), fixedAngles(c), 0)
	if err != nil {
		return nil, err
	}
	return &nativeEngine{c: c, tr: tr}, nil
}

func (e *nativeEngine) runStep(s int, tokens, targets []int32) (float32, float32, error) {
	lr, bc1, bc2 := stepScalars(e.c, s)
	loss, gnorm, err := e.tr.Step(lr, bc1, bc2, tokens, targets)
	if err != nil {
		return 0, 0, fmt.Errorf("model: %s native training step %d: %w", e.c.Variant, s, err)
	}
	return loss, gnorm, nil
}

// evalLoss is heldOutLoss over the native trainer's forward pass.
func (e *nativeEngine) evalLoss(windows [][]int32) (float64, error) {
	return heldOutLoss(e.c, windows, e.tr.EvalLoss)
}

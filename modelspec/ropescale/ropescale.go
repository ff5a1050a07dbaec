// Package ropescale is RoPE extended at inference (claim v3x,
// docs/statistics.md): a trained rope model evaluated at L > T with its
// frequencies rescaled by s = L / T, no retraining. Every method is a
// change of the per-pair frequencies theta_p of modelspec.RopeFrequencies
// (position interpolation's i / s is the frequency theta_p / s), plus
// YaRN's attention temperature; one home here, used by every evaluator.
//
// It is a package of its own, beside modelspec rather than in it, because
// the train stage imports modelspec: code there salts every train stage's
// key, and evaluating a trained model another way must not retrain it.
package ropescale

import (
	"fmt"
	"math"

	"routebench/modelspec"
)

// Rope scaling methods.
const (
	PI   = "pi"   // position interpolation (Chen et al. 2023): positions / s
	NTK  = "ntk"  // NTK-aware (bloc97 2023): base x s^(d/(d-2))
	YaRN = "yarn" // YaRN (Peng et al. 2023): per-frequency ramp + temperature
)

// Methods lists the methods in a fixed order.
var Methods = []string{YaRN, PI, NTK}

// YaRN's ramp bounds in wavelengths per training window (alpha = 1,
// beta = 32, the paper's values for LLaMA): pairs that turn fewer than
// once over T are interpolated fully, more than 32 times not at all.
const (
	yarnAlpha = 1.0
	yarnBeta  = 32.0
)

// Scaling is one method at one scale factor. The zero value (Method
// "") is plain RoPE.
type Scaling struct {
	Method   string  // "", PI, NTK or YaRN
	Factor   float64 // s = L / T; 1 is plain RoPE for every method
	TrainLen int     // T, the training window (YaRN's ramp reads it)
}

// Enabled reports whether r changes anything: a method with s != 1.
func (r Scaling) Enabled() bool { return r.Method != "" && r.Factor != 1 }

// Validate checks the method, s >= 1 and (YaRN) T > 0.
func (r Scaling) Validate() error {
	switch r.Method {
	case "":
		return nil
	case PI, NTK, YaRN:
	default:
		return fmt.Errorf("rope scaling %q: unknown method (want one of %v)", r.Method, Methods)
	}
	if !(r.Factor >= 1) || math.IsInf(r.Factor, 0) {
		return fmt.Errorf("rope scaling %s: factor %v: want a finite s = L/T >= 1", r.Method, r.Factor)
	}
	if r.Method == YaRN && r.TrainLen <= 0 {
		return fmt.Errorf("rope scaling yarn: training length %d: want T > 0 (the ramp reads T / wavelength)", r.TrainLen)
	}
	return nil
}

// Frequencies returns the scaled theta_p for a head of width dHead and RoPE
// base; with s = 1 (or no method) exactly modelspec.RopeFrequencies(dHead, base).
func (r Scaling) Frequencies(dHead int, base float64) []float64 {
	if !r.Enabled() {
		return modelspec.RopeFrequencies(dHead, base)
	}
	s := r.Factor
	switch r.Method {
	case NTK:
		d := float64(dHead)
		return modelspec.RopeFrequencies(dHead, base*math.Pow(s, d/(d-2)))
	case PI:
		theta := modelspec.RopeFrequencies(dHead, base)
		for p := range theta {
			theta[p] /= s
		}
		return theta
	case YaRN:
		theta := modelspec.RopeFrequencies(dHead, base)
		for p, th := range theta {
			g := yarnRamp(float64(r.TrainLen) * th / (2 * math.Pi)) // r = T / lambda, lambda = 2 pi / theta
			theta[p] = (1-g)*th/s + g*th
		}
		return theta
	}
	panic("ropescale: Scaling.Frequencies on an unvalidated method " + r.Method)
}

// yarnRamp is gamma(r) = clamp((r - alpha) / (beta - alpha), 0, 1): 0 for
// pairs with long wavelengths (interpolated), 1 for short (kept).
func yarnRamp(r float64) float64 {
	return math.Min(1, math.Max(0, (r-yarnAlpha)/(yarnBeta-yarnAlpha)))
}

// QKScale is the factor queries and keys are each multiplied by (so the
// logits by its square): YaRN's 0.1 ln s + 1, 1 otherwise.
func (r Scaling) QKScale() float64 {
	if r.Method == YaRN && r.Enabled() {
		return 0.1*math.Log(r.Factor) + 1
	}
	return 1
}

package nativeeval

import "routebench/modelspec"

// The route trace: the per-position transport steps of each layer, for a
// caller that measures how fast routes of real tokens decorrelate (the
// mixing window of docs/theory.md, inside a trained model). The forward
// pass already forms every step; the trace only keeps them.

// LayerRoute is one layer's transport steps over a window of L positions.
// Exactly one of the two forms is set.
type LayerRoute struct {
	Layer int
	// Angles [L][H][P] are the SO(2) angle increments a_t of accumulated
	// variants: position i's rotation is psi_i = sum_{t<=i} a_t, reduced by
	// modelspec.AccumulateAngles exactly as the forward pass sums them. For
	// a token table (random-*, learned-qk/qkv) it is angles[x_t], the same
	// slice for every layer (a table is the model's, not a layer's: a caller
	// may compare &Angles[0] to skip the repeats); for learned-proj-qkv it
	// is the layer's own projection of its normed input.
	Angles []float32
	// W [H][L][d] (unit directions) and Beta [H][L] are PaTH's steps
	// H_t = I - Beta_t W_t W_t^T (modelspec/householder.go).
	W, Beta []float32
}

// angleRoute is layer n's trace of an accumulated variant: theta holds the
// layer's projected angles (learned-proj-qkv) or is nil (a token table,
// whose increments are gathered once and shared; prev is the earlier
// layer's trace, if any).
func (m *Model) angleRoute(n int, tokens []int32, theta []float32, prev []LayerRoute) LayerRoute {
	if theta != nil {
		return LayerRoute{Layer: n, Angles: append([]float32(nil), theta...)} // theta is reused by the next layer
	}
	if len(prev) > 0 {
		return LayerRoute{Layer: n, Angles: prev[0].Angles}
	}
	a := m.Arch
	HP := a.Heads * (a.DHead() / 2)
	inc := make([]float32, len(tokens)*HP)
	for i, x := range tokens {
		copy(inc[i*HP:(i+1)*HP], m.angles[int(x)*HP:(int(x)+1)*HP])
	}
	return LayerRoute{Layer: n, Angles: inc}
}

// traceRoute appends layer n's route to res when opts ask for it: the
// angle increments of an accumulated variant, or PaTH's steps st (which
// the forward pass allocates afresh per layer, so they are kept, not
// copied). Other rotations have no route to trace (RoPE's is fixed).
func (m *Model) traceRoute(res *Result, opts Options, n int, tokens []int32, theta []float32, st *pathSteps) {
	if !opts.RouteTrace {
		return
	}
	switch {
	case st != nil:
		res.Route = append(res.Route, LayerRoute{Layer: n, W: st.w, Beta: st.beta})
	case m.Arch.Rotation == modelspec.RotationAccumulated:
		res.Route = append(res.Route, m.angleRoute(n, tokens, theta, res.Route))
	}
}

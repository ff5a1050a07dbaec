package nativeeval

import (
	"fmt"
	"routebench/model/native"

	"routebench/modelspec"
)

// AttentionSpec describes a standalone attention problem, for benchmarks
// and for callers that want the kernel without a model (the forward pass
// builds the same thing internally).
type AttentionSpec struct {
	L, Heads, DHead int
	Rotation        string  // modelspec.RotationNone, RotationRoPE or RotationAccumulated
	RopeBase        float64 // rope only
	ValueRot        bool    // value transport (accumulated only)
	ALiBi           bool
	Tokens          []int32   // accumulated only: the window, len L
	Angles          []float32 // accumulated only: [V][Heads][DHead/2]
	// PaTH's Householder steps H_t = I - beta_t w_t w_t^T (Rotation none):
	// PathW [Heads][L][DHead] unit directions, PathBeta [Heads][L] in (0, 2).
	// With them Run transports the keys as a path layer does, building each
	// key block's WY form on every call (the forward pass pays that per layer).
	PathW, PathBeta []float32
	// KERPLE's log bias (modelspec/kerple.go): p_h and a_h, [Heads] each,
	// as stored (the bias floors them); nil: no KERPLE bias.
	KerpleP, KerpleA []float32
}

// Attention is a prepared attention problem.
type Attention struct {
	s    *attnShape
	bufs *headBufs
	path *pathSteps  // nil unless PaTH
	pb   *pathBlocks // PaTH's key blocks, reused run to run
}

// NewAttention checks spec and precomputes its rotation table.
func NewAttention(as AttentionSpec) (*Attention, error) {
	if as.L <= 0 || as.Heads <= 0 || as.DHead <= 0 || as.DHead%2 != 0 {
		return nil, fmt.Errorf("native: attention spec L=%d heads=%d d_head=%d: want positive sizes and an even d_head", as.L, as.Heads, as.DHead)
	}
	s := &attnShape{L: as.L, H: as.Heads, d: as.DHead, valueRot: as.ValueRot}
	switch as.Rotation {
	case modelspec.RotationNone:
	case modelspec.RotationRoPE:
		s.cs = ropeCosSin(as.L, as.Heads, modelspec.RopeFrequencies(as.DHead, as.RopeBase), 1, 0)
	case modelspec.RotationAccumulated:
		if len(as.Tokens) != as.L {
			return nil, fmt.Errorf("native: accumulated attention needs %d tokens, got %d", as.L, len(as.Tokens))
		}
		per := as.Heads * as.DHead / 2
		for i, x := range as.Tokens {
			if x < 0 || (int(x)+1)*per > len(as.Angles) {
				return nil, fmt.Errorf("native: token %d at position %d has no row in the %d-value angle table", x, i, len(as.Angles))
			}
		}
		s.cs = accumulatedCosSin(as.Tokens, as.Angles, as.Heads, as.DHead, 0)
	default:
		return nil, fmt.Errorf("native: unknown rotation %q (want none, rope or accumulated)", as.Rotation)
	}
	if as.ValueRot && s.cs == nil {
		return nil, fmt.Errorf("native: value transport needs a rotation")
	}
	if as.ALiBi {
		s.slopes = alibiSlopes(as.Heads)
	}
	if as.KerpleP != nil || as.KerpleA != nil {
		if len(as.KerpleP) != as.Heads || len(as.KerpleA) != as.Heads {
			return nil, fmt.Errorf("native: KERPLE attention needs %d p and %d a values (one per head), got %d and %d", as.Heads, as.Heads, len(as.KerpleP), len(as.KerpleA))
		}
		if as.ALiBi || as.PathW != nil || as.PathBeta != nil {
			return nil, fmt.Errorf("native: the KERPLE bias does not combine with ALiBi or PaTH (no variant does, modelspec.Arch.Validate); drop one of them from the spec")
		}
		s.kerple = kerpleTables(nil, as.KerpleP, as.KerpleA, as.L, 0)
	}
	a := &Attention{s: s, bufs: newHeadBufs(s)}
	if as.PathW != nil || as.PathBeta != nil {
		if as.Rotation != modelspec.RotationNone || as.ValueRot {
			return nil, fmt.Errorf("native: PaTH attention takes no rotation (got %q, value transport %v): its transport is the Householder steps", as.Rotation, as.ValueRot)
		}
		if len(as.PathW) != as.Heads*as.L*as.DHead || len(as.PathBeta) != as.Heads*as.L {
			return nil, fmt.Errorf("native: PaTH attention needs %d directions and %d betas ([heads][L][d_head], [heads][L]), got %d and %d",
				as.Heads*as.L*as.DHead, as.Heads*as.L, len(as.PathW), len(as.PathBeta))
		}
		a.path = &pathSteps{w: as.PathW, beta: as.PathBeta}
	}
	return a, nil
}

// FLOPs is the conventional count for causal attention: QK^T and AV, each
// 2*d multiply-adds per (query, key) pair, over L*L/2 pairs, per head.
// PaTH adds its transport, about a quarter more at d = 32 (pathFLOPs).
func (a *Attention) FLOPs() float64 {
	if a.path != nil {
		return pathFLOPs(a.s.L, a.s.H, a.s.d)
	}
	return 4 * float64(a.s.L) * float64(a.s.L) / 2 * float64(a.s.d) * float64(a.s.H)
}

// Run computes out ([L][Heads*DHead]) from qkv ([L][3*Heads*DHead]: q, k,
// v side by side per row) on workers goroutines (0: GOMAXPROCS). It is not
// safe for concurrent use (it reuses the head buffers).
func (a *Attention) Run(out, qkv []float32, workers int) {
	s := a.s
	D := s.H * s.d
	native.ParallelFor(s.nkb(), workers, func(kb int) { // one key block per task: no shared cache lines in kt
		row0 := kb * blockK
		x := qkv[row0*3*D:]
		a.bufs.scatterRows(s, row0, min(blockK, s.L-row0), x, x[D:], x[2*D:], 3*D)
	})
	if a.path != nil {
		a.pb = newPathBlocks(s, a.bufs, a.path, workers, a.pb)
		pathAttend(s, a.bufs, a.path, a.pb, out, workers, nil)
		return
	}
	a.bufs.attend(s, out, workers, nil)
}

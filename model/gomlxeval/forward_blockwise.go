package gomlxeval

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/model"
	"routebench/modelspec"
	"routebench/modelspec/weights"
)

// LogProbsBlockwise is the gomlx evaluator for long windows: the forward of
// exported weights on one window, with attention computed in query chunks
// of chunk positions against the keys up to each chunk's end (the causal
// half, never an L x L matrix) and the output layer in the same chunks. It
// returns log p(targets[i] | tokens[0..i]) in nats.
//
// Memory is O(H chunk L + L D) where Forward needs O(H L^2): at the paper's
// 65,536 tokens, 6.4 GB for 2,048-position chunks instead of 206 GB a
// layer. It exists to run on XLA (a GPU) beside the native CPU evaluator;
// backend names the gomlx backend ("go" for tests, "xla:/abs/plugin.so").
// The graph is unrolled over layers and chunks, so it compiles once per
// (weights shape, L, chunk).
func LogProbsBlockwise(set *weights.Set, tokens, targets []int32, chunk int, backend string) ([]float64, error) {
	if set == nil || len(tokens) == 0 || len(targets) != len(tokens) {
		return nil, fmt.Errorf("gomlxeval: LogProbsBlockwise needs weights and as many targets (%d) as tokens (%d, at least one)", len(targets), len(tokens))
	}
	if chunk <= 0 {
		return nil, fmt.Errorf("gomlxeval: LogProbsBlockwise: chunk %d must be positive", chunk)
	}
	if set.Arch.Householder {
		return nil, fmt.Errorf("gomlxeval: LogProbsBlockwise: %s weights use the Householder transport (PaTH), which this blockwise graph does not implement; use the native evaluator (model/nativeeval) or Forward", set.Arch.Variant)
	}
	if set.Arch.AngleProj {
		return nil, fmt.Errorf("gomlxeval: LogProbsBlockwise: %s weights project their angles from each block's input (angle_proj), which this blockwise graph does not implement; use the native evaluator (model/nativeeval) or Forward", set.Arch.Variant)
	}
	V := set.Arch.Vocab
	for i, y := range targets {
		if y < 0 || int(y) >= V {
			return nil, fmt.Errorf("gomlxeval: LogProbsBlockwise: target %d at position %d is outside vocabulary [0, %d)", y, i, V)
		}
	}
	L := len(tokens)
	tgt := tensors.FromFlatDataAndDimensions(append([]int32(nil), targets...), L)
	flat, c, err := model.RunExported(set, tokens, backend, "LogProbsBlockwise", []*tensors.Tensor{tgt},
		func(w model.Network, p map[string]*Node, tok *Node, rot *model.Rotation, extra []*Node) *Node {
			return blockwiseLogProbs(w, p, Reshape(tok, L), extra[0], unbatched(w, rot, L), newDistBias(w, p), chunk)
		})
	if err != nil {
		return nil, fmt.Errorf("gomlxeval: LogProbsBlockwise: %w", err)
	}
	lp := make([]float64, L)
	for i, x := range flat {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("gomlxeval: LogProbsBlockwise: non-finite log-probability at position %d (%s/%s weights)", i, c.Profile, c.Variant)
		}
		lp[i] = float64(x)
	}
	return lp, nil
}

// unbatched drops the batch axis of the host rotation: [1, L, H, d] ->
// [L, H, d] (nil stays nil).
func unbatched(w model.Network, rot *model.Rotation, L int) *model.Rotation {
	if rot == nil {
		return nil
	}
	H, d := w.Heads(), w.DHead()
	return &model.Rotation{Cos: Reshape(rot.Cos, L, H, d), Sin: Reshape(rot.Sin, L, H, d)}
}

// distBias is the variant's distance bias, which chunkBias turns into
// each chunk's bias in the graph: ALiBi's slopes m_h (host values), or
// KERPLE's per-block bias from the block's kerple_p and kerple_a, the
// training graph's own (model.Network.KerpleBias); neither: none.
type distBias struct {
	slopes []float64
	kerple func(l int, dist *Node) *Node // [c, K] distances -> [H, c, K]
}

func newDistBias(w model.Network, p map[string]*Node) distBias {
	var b distBias
	if w.Variant().ALiBi {
		b.slopes = modelspec.ALiBiSlopes(w.Heads())
	}
	if w.Variant().KerpleLog {
		b.kerple = func(l int, dist *Node) *Node { return w.KerpleBias(l, p, dist) }
	}
	return b
}

// blockwiseLogProbs is the network's logits plus log-softmax for one window
// of tokens [L] (B = 1), chunk by chunk: [L] log-probabilities of targets [L].
func blockwiseLogProbs(w model.Network, p map[string]*Node, tokens, targets *Node, rot *model.Rotation, bias distBias, chunk int) *Node {
	L := tokens.Shape().Dimensions[0]
	hf := blockwiseHidden(w, p, tokens, rot, bias, chunk)
	var parts []*Node
	for q0 := 0; q0 < L; q0 += chunk {
		q1 := min(q0+chunk, L)
		logits := model.Dense(Slice(hf, AxisRange(q0, q1)), p["unembed"]) // [c, V]
		mx := ReduceMax(logits, -1)
		sh := Sub(logits, InsertAxes(mx, -1))
		lse := Log(ReduceSum(Exp(sh), -1))
		tgt := ReduceSum(Mul(sh, OneHot(Slice(targets, AxisRange(q0, q1)), logits.Shape().Dimensions[1], logits.DType())), -1)
		parts = append(parts, Sub(tgt, lse))
	}
	return Concatenate(parts, 0)
}

// blockwiseHidden is the network up to the final norm for one window of
// tokens [L]: [L, D], attention in query chunks.
func blockwiseHidden(w model.Network, p map[string]*Node, tokens *Node, rot *model.Rotation, bias distBias, chunk int) *Node {
	h := w.Embed(p, tokens) // [L, D]
	for l := 0; l < w.Config().Layers; l++ {
		h = Add(h, blockwiseAttention(w, l, p, w.Norm(h, p[model.BlockName(l, "norm1")]), rot, bias, chunk))
		h = Add(h, w.MLP(l, p, w.Norm(h, p[model.BlockName(l, "norm2")])))
	}
	return w.Norm(h, p["normf"])
}

// blockwiseAttention is block l's attention for one window [L, D], queries
// in chunks, each against keys [0, chunk end).
func blockwiseAttention(w model.Network, l int, p map[string]*Node, a *Node, rot *model.Rotation, bias distBias, chunk int) *Node {
	L := a.Shape().Dimensions[0]
	q, k, v := w.QKV(l, p, a, rot) // [L, H, d]
	var outs []*Node
	for q0 := 0; q0 < L; q0 += chunk {
		q1 := min(q0+chunk, L)
		qc := Slice(q, AxisRange(q0, q1))                                // [c, H, d]
		kc, vc := Slice(k, AxisRange(0, q1)), Slice(v, AxisRange(0, q1)) // [K, H, d]
		s := DotGeneral(qc, []int{2}, []int{1}, kc, []int{2}, []int{1})  // [H, c, K]
		s = Add(MulScalar(s, 1/math.Sqrt(float64(w.DHead()))), chunkBias(s, bias, l, q0))
		o := DotGeneral(model.AttentionSoftmax(s), []int{2}, []int{0}, vc, []int{0}, []int{1}) // [H, c, d]
		outs = append(outs, TransposeAllAxes(o, 1, 0, 2))                                      // [c, H, d]
	}
	return w.Output(l, p, Concatenate(outs, 0), rot) // [L, H, d] -> [L, D]
}

// chunkBias is attentionBias for block l's scores s [H, c, K] of queries
// q0..q0+c-1 against keys 0..K-1, built in the graph (a host constant
// would be H c K floats per chunk): maskedLogit where the key is after
// the query, else -m_h (i - j) for ALiBi, -p_h log(1 + a_h (i - j)) for
// KERPLE (block l's p, a, as the training graph builds it), or 0.
func chunkBias(s *Node, b distBias, l, q0 int) *Node {
	g := s.Graph()
	dims := s.Shape().Dimensions
	H, c, K := dims[0], dims[1], dims[2]
	// i - j is exact in float32 up to 2^24 positions.
	pos := shapes.Make(dtypes.Float32, c, K)
	dist2 := Sub(AddScalar(Iota(g, pos, 0), float64(q0)), Iota(g, pos, 1)) // [c, K]
	dist := BroadcastToDims(InsertAxes(dist2, 0), H, c, K)
	bias := ZerosLike(dist)
	if b.slopes != nil {
		m := make([]float32, H)
		for h, x := range b.slopes {
			m[h] = float32(-x)
		}
		slope := BroadcastToDims(Const(g, tensors.FromFlatDataAndDimensions(m, H, 1, 1)), H, c, K)
		bias = Mul(slope, dist)
	}
	if b.kerple != nil {
		// Distances clamped at 0 first: a masked pair's negative distance
		// gives log1p of less than -1, NaN, even where Where drops it.
		bias = b.kerple(l, Max(dist2, ZerosLike(dist2)))
	}
	masked := BroadcastToDims(Scalar(g, dtypes.Float32, model.MaskedLogit), H, c, K)
	return model.ConstLike(s, Where(LessThan(dist, ZerosLike(dist)), masked, bias))
}

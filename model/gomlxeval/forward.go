package gomlxeval

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/model"
	"routebench/modelspec/weights"
)

// Forward runs the gomlx forward pass of exported weights on one window
// and returns logits [len(tokens)][Vocab]. Rotations come from the host
// float64 path for every variant (including learned ones: their table is
// fixed once exported), the same path the native evaluator implements;
// the training graph builds KERPLE's bias per block from the weights' p
// and a (model/position_kerple.go). Memory is O(H L^2): meant for cross-checks, not for long contexts (see
// LogProbsBlockwise).
func Forward(set *weights.Set, tokens []int32) (logits [][]float32, err error) {
	if set == nil || len(tokens) == 0 {
		return nil, fmt.Errorf("gomlxeval: Forward needs weights and at least one token")
	}
	L := len(tokens)
	flat, c, err := model.RunExported(set, tokens, "", "Forward", nil, fullAttention(L))
	if err != nil {
		return nil, fmt.Errorf("gomlxeval: Forward: %w", err)
	}
	logits = make([][]float32, L)
	for i := range logits {
		logits[i] = flat[i*c.Vocab : (i+1)*c.Vocab]
		for _, x := range logits[i] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("gomlxeval: Forward: non-finite logit at position %d (%s/%s weights)", i, c.Profile, c.Variant)
			}
		}
	}
	return logits, nil
}

// fullAttention builds the training graph's forward (model.Network.Logits)
// with the host causal/ALiBi bias [H, L, L]; the graph adds KERPLE's
// per-block bias itself, so this checks the graph the trainer runs.
func fullAttention(L int) func(w model.Network, p map[string]*Node, tok *Node, rot *model.Rotation, _ []*Node) *Node {
	return func(w model.Network, p map[string]*Node, tok *Node, rot *model.Rotation, _ []*Node) *Node {
		H := w.Heads()
		bias := Const(tok.Graph(), tensors.FromFlatDataAndDimensions(model.AttentionBias(H, L, w.Variant().ALiBi), H, L, L))
		return w.Logits(p, tok, rot, bias)
	}
}

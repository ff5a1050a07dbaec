package gomlxeval

import (
	"fmt"

	"routebench/model"
	"routebench/modelspec"
	"routebench/modelspec/weights"
)

// kerpleHeads is one block's KERPLE p_h and a_h as the forward uses them:
// floored (modelspec.KerpleEffective), in float64.
type kerpleHeads struct{ p, a []float64 }

// loadKerple reads every block's KERPLE parameters of a kerple_log arch
// from the weights on the host (nil for other archs), as ALiBi's slopes
// are host values: the graph then only forms the distances. They come
// from the weights set rather than the graph's parameters so that the
// evaluators do not depend on which tensors the training graph declares.
// who names the caller for errors.
func loadKerple(set *weights.Set, who string) ([]kerpleHeads, error) {
	a := set.Arch
	if !a.KerpleLog {
		return nil, nil
	}
	ks := make([]kerpleHeads, a.Layers)
	for l := range ks {
		for _, t := range []struct {
			name string
			dst  *[]float64
		}{{modelspec.KerpleP, &ks[l].p}, {modelspec.KerpleA, &ks[l].a}} {
			x, err := set.Get(model.BlockName(l, t.name), a.Heads)
			if err != nil {
				return nil, fmt.Errorf("gomlxeval: %s: loading the KERPLE bias of %s/%s weights: %w (re-export the weights with the train stage)", who, a.Variant, a.Profile, err)
			}
			for _, v := range x {
				*t.dst = append(*t.dst, modelspec.KerpleEffective(float64(v)))
			}
		}
	}
	return ks, nil
}

package model

import "routebench/modelspec"

// ALiBi (Press et al. 2022): logits get -m_h (i - j), an explicit distance
// bias, the paper's far-mass-control baseline; slopes from modelspec.ALiBiSlopes.

// maskedLogit is added to non-causal logits; exp underflows to exactly 0.
const maskedLogit = -1e9

// attentionBias returns the additive logit bias [H][L][L] (flattened): the
// causal mask, plus -m_h (i-j) for ALiBi.
func attentionBias(H, L int, alibi bool) []float32 {
	var slopes []float64
	if alibi {
		slopes = modelspec.ALiBiSlopes(H)
	}
	b := make([]float32, H*L*L)
	for h := 0; h < H; h++ {
		for i := 0; i < L; i++ {
			row := b[(h*L+i)*L : (h*L+i+1)*L]
			for j := range row {
				switch {
				case j > i:
					row[j] = maskedLogit
				case alibi:
					row[j] = float32(-slopes[h] * float64(i-j))
				}
			}
		}
	}
	return b
}

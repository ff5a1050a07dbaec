package model

import "math"

// ALiBi (Press et al. 2022): logits get -m_h (i - j), an explicit distance
// bias, the paper's far-mass-control baseline. No rotation.

// alibiSlopes returns m_h for H heads: 2^(-8(h+1)/H) for a power of two H;
// otherwise the slopes of the next lower power of two followed by every other
// slope of the next higher one (Press et al.'s reference code).
func alibiSlopes(H int) []float64 {
	pow2 := func(n int) []float64 {
		s := make([]float64, n)
		for h := range s {
			s[h] = math.Pow(2, -8*float64(h+1)/float64(n))
		}
		return s
	}
	if H&(H-1) == 0 {
		return pow2(H)
	}
	n := 1 << int(math.Floor(math.Log2(float64(H))))
	s := pow2(n)
	extra := pow2(2 * n)
	for i := 0; len(s) < H; i += 2 {
		s = append(s, extra[i])
	}
	return s
}

// maskedLogit is added to non-causal logits; exp underflows to exactly 0.
const maskedLogit = -1e9

// attentionBias returns the additive logit bias [H][L][L] (flattened): the
// causal mask, plus -m_h (i-j) for ALiBi.
func attentionBias(H, L int, alibi bool) []float32 {
	var slopes []float64
	if alibi {
		slopes = alibiSlopes(H)
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

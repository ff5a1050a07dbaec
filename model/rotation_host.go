package model

import (
	"fmt"
	"math"

	"routebench/modelspec"
)

// hostRotation returns cos and sin of psi for a batch of windows, flattened
// [B, T, H, d] with each pair's value on both of its dims, from the float64
// angles of package modelspec (RoPE, or the accumulated prefix sums of table:
// the fixed table, or the learned variable's current value). Variants
// without rotation return nil slices.
func hostRotation(c Config, table []float32, tokens []int32, B, T int) (cos, sin []float32, err error) {
	v, err := modelspec.LookupVariant(c.Variant)
	if err != nil {
		return nil, nil, err
	}
	H, d := c.Heads, c.DModel/c.Heads
	P := d / 2
	if len(tokens) != B*T {
		return nil, nil, fmt.Errorf("model: %d tokens for a %d x %d batch", len(tokens), B, T)
	}
	if v.Rotation == modelspec.RotationNone {
		return nil, nil, nil
	}
	if v.Rotation == modelspec.RotationAccumulated {
		if len(table) != c.Vocab*H*P {
			return nil, nil, fmt.Errorf("model: angle table has %d values, want %d x %d x %d", len(table), c.Vocab, H, P)
		}
		for i, x := range tokens {
			if x < 0 || int(x) >= c.Vocab {
				return nil, nil, fmt.Errorf("model: token %d at position %d is outside vocabulary [0, %d)", x, i, c.Vocab)
			}
		}
	}
	theta := modelspec.RopeFrequencies(d, modelspec.RopeBase)
	psi := make([]float64, H*P) // one position's angles, [h*P+p]
	cos = make([]float32, B*T*H*d)
	sin = make([]float32, B*T*H*d)
	for b := 0; b < B; b++ {
		clear(psi)
		for t := 0; t < T; t++ {
			switch v.Rotation {
			case modelspec.RotationRoPE: // the same for every head
				for h := 0; h < H; h++ {
					for p, th := range theta {
						psi[h*P+p] = modelspec.RopeAngle(t, th)
					}
				}
			case modelspec.RotationAccumulated:
				x := int(tokens[b*T+t])
				modelspec.AccumulateAngles(psi, table[x*H*P:(x+1)*H*P])
			}
			base := (b*T + t) * H * d
			for k, a := range psi {
				cs, sn := float32(math.Cos(a)), float32(math.Sin(a))
				cos[base+2*k], cos[base+2*k+1] = cs, cs
				sin[base+2*k], sin[base+2*k+1] = sn, sn
			}
		}
	}
	return cos, sin, nil
}

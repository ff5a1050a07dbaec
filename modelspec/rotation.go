package modelspec

import (
	"fmt"
	"math"
)

// RotationCosSin returns cos and sin of psi for a batch of windows, flattened
// [B, T, H, d] with each pair's value on both of its dims, from the float64
// angles of package modelspec (RoPE, or the accumulated prefix sums of table:
// the fixed table, or the learned variable's current value); both
// trainers (gomlx and native) use it. Variants
// without rotation return nil slices, and so do projected angles
// (AngleProj): they depend on each block's input, so the graph and the
// native code compute them per block.
func RotationCosSin(c Config, table []float32, tokens []int32, B, T int) (cos, sin []float32, err error) {
	v, err := LookupVariant(c.Variant)
	if err != nil {
		return nil, nil, err
	}
	if len(tokens) != B*T {
		return nil, nil, fmt.Errorf("modelspec: %d tokens for a %d x %d batch", len(tokens), B, T)
	}
	if v.Rotation == RotationNone || v.AngleProj {
		return nil, nil, nil
	}
	n := B * T * c.DModel
	cos, sin = make([]float32, n), make([]float32, n)
	if err := RotationCosSinInto(c, table, tokens, B, T, cos, sin); err != nil {
		return nil, nil, err
	}
	return cos, sin, nil
}

// RotationCosSinInto is RotationCosSin into cos and sin (B*T*DModel values
// each, overwritten), for callers that keep their own buffers; it does
// nothing for variants without rotation.
func RotationCosSinInto(c Config, table []float32, tokens []int32, B, T int, cos, sin []float32) error {
	v, err := LookupVariant(c.Variant)
	if err != nil {
		return err
	}
	H, d := c.Heads, c.DModel/c.Heads
	P := d / 2
	if len(tokens) != B*T {
		return fmt.Errorf("modelspec: %d tokens for a %d x %d batch", len(tokens), B, T)
	}
	if v.Rotation == RotationNone || v.AngleProj {
		return nil
	}
	if len(cos) != B*T*H*d || len(sin) != B*T*H*d {
		return fmt.Errorf("modelspec: cos/sin buffers of %d/%d values for a %d x %d x %d batch", len(cos), len(sin), B, T, H*d)
	}
	if v.Rotation == RotationAccumulated {
		if len(table) != c.Vocab*H*P {
			return fmt.Errorf("modelspec: angle table has %d values, want %d x %d x %d", len(table), c.Vocab, H, P)
		}
		for i, x := range tokens {
			if x < 0 || int(x) >= c.Vocab {
				return fmt.Errorf("modelspec: token %d at position %d is outside vocabulary [0, %d)", x, i, c.Vocab)
			}
		}
	}
	theta := RopeFrequencies(d, RopeBase)
	psi := make([]float64, H*P) // one position's angles, [h*P+p]
	for b := 0; b < B; b++ {
		clear(psi)
		for t := 0; t < T; t++ {
			switch v.Rotation {
			case RotationRoPE: // the same for every head
				for h := 0; h < H; h++ {
					for p, th := range theta {
						psi[h*P+p] = RopeAngle(t, th)
					}
				}
			case RotationAccumulated:
				x := int(tokens[b*T+t])
				AccumulateAngles(psi, table[x*H*P:(x+1)*H*P])
			}
			base := (b*T + t) * H * d
			cr, sr := cos[base:base+H*d], sin[base:base+H*d]
			for k, a := range psi {
				// Sincos is bit for bit Sin and Cos (the same reduction
				// and polynomials; TestSincosMatchesSinCos), at the cost
				// of one.
				s, c := math.Sincos(a)
				cs, sn := float32(c), float32(s)
				cr[2*k], cr[2*k+1] = cs, cs
				sr[2*k], sr[2*k+1] = sn, sn
			}
		}
	}
	return nil
}

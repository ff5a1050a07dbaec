package model

import (
	"fmt"
	"math"
)

// hostRotation returns cos and sin of psi for a batch of windows, flattened
// [B, T, H, d] with each pair's value on both of its dims, computed in
// float64 (see position_rope.go, position_accumulated.go). table is the
// angle table for accumulated variants (fixed or the learned variable's
// current value); nil rotation kinds return nil slices.
func hostRotation(c Config, table []float32, tokens []int32, B, T int) (cos, sin []float32, err error) {
	v, _ := LookupVariant(c.Variant)
	H, d := c.Heads, c.DModel/c.Heads
	P := d / 2
	if len(tokens) != B*T {
		return nil, nil, fmt.Errorf("model: %d tokens for a %d x %d batch", len(tokens), B, T)
	}
	var perWindow func(w []int32) [][]float64 // psi[t][h*P+p]
	switch v.Rotation {
	case RotationNone:
		return nil, nil, nil
	case RotationRoPE:
		r := ropeAngles(T, d, RopeBase) // same for every head
		rows := make([][]float64, T)
		for t := range rows {
			rows[t] = make([]float64, H*P)
			for h := 0; h < H; h++ {
				copy(rows[t][h*P:], r[t])
			}
		}
		perWindow = func([]int32) [][]float64 { return rows }
	case RotationAccumulated:
		if len(table) != c.Vocab*H*P {
			return nil, nil, fmt.Errorf("model: angle table has %d values, want %d x %d x %d", len(table), c.Vocab, H, P)
		}
		for i, x := range tokens {
			if x < 0 || int(x) >= c.Vocab {
				return nil, nil, fmt.Errorf("model: token %d at position %d is outside vocabulary [0, %d)", x, i, c.Vocab)
			}
		}
		perWindow = func(w []int32) [][]float64 { return accumulatedAngles(table, H, P, w) }
	}
	cos = make([]float32, B*T*H*d)
	sin = make([]float32, B*T*H*d)
	for b := 0; b < B; b++ {
		psi := perWindow(tokens[b*T : (b+1)*T])
		for t := 0; t < T; t++ {
			base := (b*T + t) * H * d
			for k, a := range psi[t] {
				cs, sn := float32(math.Cos(a)), float32(math.Sin(a))
				cos[base+2*k], cos[base+2*k+1] = cs, cs
				sin[base+2*k], sin[base+2*k+1] = sn, sn
			}
		}
	}
	return cos, sin, nil
}

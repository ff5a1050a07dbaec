package model

import "math"

// RoPE (Su et al.): pair p of every head turns by theta_p = base^(-2p/d) per
// position, psi_i = i * theta_p. Pairs are interleaved (dims 2p, 2p+1), as in
// ARCHITECTURE.md.

// ropeAngles returns psi[i][p] for i in [0, L), computed in float64 and
// reduced to [-pi, pi] before cos/sin so that long windows keep full precision.
func ropeAngles(L, dHead int, base float64) [][]float64 {
	P := dHead / 2
	theta := make([]float64, P)
	for p := range theta {
		theta[p] = math.Pow(base, -2*float64(p)/float64(dHead))
	}
	out := make([][]float64, L)
	for i := range out {
		row := make([]float64, P)
		for p := range row {
			row[p] = math.Remainder(float64(i)*theta[p], 2*math.Pi)
		}
		out[i] = row
	}
	return out
}

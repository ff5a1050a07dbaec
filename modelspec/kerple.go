package modelspec

import "math"

// KERPLE's logarithmic distance bias (Chi et al. 2022, "KERPLE: Kernelized
// Relative Positional Embedding for Length Extrapolation", arXiv 2205.09921),
// as its official code builds it (chijames/KERPLE, ParallelKerpleLog):
//
//	s_ij = q_i . k_j / sqrt(d) - p_h log(1 + a_h (i - j)),   j <= i
//
// with p_h and a_h trained per block and head, no rotation. The choices,
// beside the official ones:
//   - init p ~ U(0, 2), a ~ U(0, 1) per head (the official get_parameter(2,
//     'uniform') and get_parameter(1, 'uniform')), each tensor from its own
//     seeded stream like every other (model/params.go);
//   - the official code clamps the stored p and a to >= KerpleEps before each
//     forward pass (a projection). Here every implementation uses
//     max(p, KerpleEps) and max(a, KerpleEps) in the forward pass and the
//     derivative of max (0 below the floor), so the stored value may sit below
//     the floor while the bias uses the floor. The two agree whenever p, a
//     stay above it, which they do at init with probability 1 - 1.5% per
//     head and parameter, and a parameter pushed below it stops moving
//     instead of resting on it;
//   - not weight-decayed (biases and gains are not);
//   - the bias is added after the 1/sqrt(d) scale, as ALiBi's.
const KerpleEps = 1e-2

// Tensor names of a block's KERPLE parameters (block000/kerple_p, ...),
// each [H].
const (
	KerpleP = "kerple_p"
	KerpleA = "kerple_a"
)

// KerpleInitScale is the width of the uniform init of a tensor: p ~ U(0, 2),
// a ~ U(0, 1).
func KerpleInitScale(name string) float64 {
	if name == KerpleP {
		return 2
	}
	return 1
}

// KerpleEffective is the value the forward pass uses for a stored p or a.
func KerpleEffective(x float64) float64 { return math.Max(x, KerpleEps) }

// KerpleBias is the bias of distance n = i - j >= 0 for stored p and a.
func KerpleBias(p, a float64, n int) float64 {
	return -KerpleEffective(p) * math.Log1p(KerpleEffective(a)*float64(n))
}

// KerpleBiasGrad is the derivative of KerpleBias with respect to the stored
// p and a: -log(1 + a n) and -p n / (1 + a n), each 0 where the floor is
// active.
func KerpleBiasGrad(p, a float64, n int) (dp, da float64) {
	pe, ae := KerpleEffective(p), KerpleEffective(a)
	if p > KerpleEps {
		dp = -math.Log1p(ae * float64(n))
	}
	if a > KerpleEps {
		da = -pe * float64(n) / (1 + ae*float64(n))
	}
	return dp, da
}

// KerpleTable is one head's bias by distance, rev[m] = bias(n - 1 - m) for
// m < n, followed by pad zeros: the row of query i against keys j0.. reads
// rev[n-1-i+j0:], the layout the ALiBi ramps use (the score row adds it
// elementwise; keys past the query read the pad and are masked anyway).
func KerpleTable(p, a float64, n, pad int) []float32 {
	rev := make([]float32, n+pad)
	for m := 0; m < n; m++ {
		rev[m] = float32(KerpleBias(p, a, n-1-m))
	}
	return rev
}

const docKerple = "KERPLE log bias -p_h log(1 + a_h (i-j)), p_h, a_h trained per block and head (>= 0.01; Chi et al. 2022); no rotation"

package native

import "math"

// Simple float64 references, written from ARCHITECTURE.md without any of
// the blocking, streaming or layout tricks of the kernels.

// refAttnIn is one attention problem: rows of q, k, v ([L][H*d]) and the
// angles psi ([L][H][d/2]) or nil.
type refAttnIn struct {
	L, H, d  int
	q, k, v  [][]float64
	psi      [][]float64 // [L][H*P]
	valueRot bool
	slopes   []float64
}

// rot rotates the pairs of u (one head, d values) by the angles t ([P]).
func rot(u []float64, t []float64, sign float64) []float64 {
	out := make([]float64, len(u))
	for p, a := range t {
		c, s := math.Cos(a), sign*math.Sin(a)
		out[2*p] = u[2*p]*c - u[2*p+1]*s
		out[2*p+1] = u[2*p]*s + u[2*p+1]*c
	}
	return out
}

// refAttention returns the output rows [L][H*d] and the weights alpha
// [H][L][L] (causal; zero above the diagonal).
func refAttention(in refAttnIn) ([][]float64, [][][]float64) {
	L, H, d, P := in.L, in.H, in.d, in.d/2
	out := make([][]float64, L)
	for i := range out {
		out[i] = make([]float64, H*d)
	}
	alpha := make([][][]float64, H)
	for h := 0; h < H; h++ {
		alpha[h] = make([][]float64, L)
		head := func(x []float64) []float64 { return x[h*d : h*d+d] }
		ang := func(i int) []float64 { return in.psi[i][h*P : h*P+P] }
		q, k, v := make([][]float64, L), make([][]float64, L), make([][]float64, L)
		for i := 0; i < L; i++ {
			q[i], k[i], v[i] = head(in.q[i]), head(in.k[i]), head(in.v[i])
			if in.psi != nil {
				q[i], k[i] = rot(q[i], ang(i), 1), rot(k[i], ang(i), 1)
				if in.valueRot {
					v[i] = rot(v[i], ang(i), 1)
				}
			}
		}
		for i := 0; i < L; i++ {
			s := make([]float64, i+1)
			mx := math.Inf(-1)
			for j := 0; j <= i; j++ {
				for c := 0; c < d; c++ {
					s[j] += q[i][c] * k[j][c]
				}
				s[j] /= math.Sqrt(float64(d))
				if in.slopes != nil {
					s[j] -= in.slopes[h] * float64(i-j)
				}
				mx = math.Max(mx, s[j])
			}
			var sum float64
			for j := range s {
				s[j] = math.Exp(s[j] - mx)
				sum += s[j]
			}
			alpha[h][i] = make([]float64, L)
			o := make([]float64, d)
			for j := range s {
				a := s[j] / sum
				alpha[h][i][j] = a
				for c := range o {
					o[c] += a * v[j][c]
				}
			}
			if in.valueRot {
				o = rot(o, ang(i), -1)
			}
			copy(out[i][h*d:], o)
		}
	}
	return out, alpha
}

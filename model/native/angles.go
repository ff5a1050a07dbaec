package native

import "math"

// Rotation angles psi_i (per position, head and pair) as a table of
// float32 (cos, sin) pairs, [L][H][P][2]: the only form the kernels read.
// Angles are computed in float64 and reduced modulo 2 pi before cos/sin
// (ARCHITECTURE.md), so that accumulated sums over 65K tokens and RoPE's
// i*theta at large i keep full precision.

const twoPi = 2 * math.Pi

func putCosSin(dst []float32, psi float64) {
	s, c := math.Sincos(math.Mod(psi, twoPi))
	dst[0], dst[1] = float32(c), float32(s)
}

// ropeCosSin: psi_i = i * base^(-2p/d), the same for every head.
func ropeCosSin(L, H, d int, base float64, workers int) []float32 {
	P := d / 2
	theta := make([]float64, P)
	for p := range theta {
		theta[p] = math.Pow(base, -2*float64(p)/float64(d))
	}
	cs := make([]float32, L*H*d)
	const rows = 256
	parallelFor((L+rows-1)/rows, workers, func(b int) {
		for i := b * rows; i < min(L, (b+1)*rows); i++ {
			for p, th := range theta {
				putCosSin(cs[(i*H)*d+2*p:], float64(i)*th)
			}
			for h := 1; h < H; h++ {
				copy(cs[(i*H+h)*d:(i*H+h+1)*d], cs[i*H*d:(i*H+1)*d])
			}
		}
	})
	return cs
}

// accumulatedCosSin: psi_i[h,p] = sum_{s<=i} angles[x_s, h, p], a float64
// prefix sum, sequential along the window and parallel over heads (the
// Mod and Sincos, not the additions, are the cost).
func accumulatedCosSin(tokens []int32, angles []float32, H, d int, workers int) []float32 {
	P := d / 2
	cs := make([]float32, len(tokens)*H*d)
	parallelFor(H, workers, func(h int) {
		acc := make([]float64, P)
		for i, x := range tokens {
			row := angles[(int(x)*H+h)*P : (int(x)*H+h+1)*P]
			out := cs[(i*H+h)*d : (i*H+h+1)*d]
			for p, a := range row {
				acc[p] += float64(a)
				putCosSin(out[2*p:], acc[p])
			}
		}
	})
	return cs
}

// alibiSlopes: m_h = 2^(-8(h+1)/H) for H a power of two; otherwise the
// slopes of the next lower power of two n, then every other slope of 2n
// (Press et al.'s interleaving).
func alibiSlopes(H int) []float32 {
	pow2 := func(n int) []float64 {
		s := make([]float64, n)
		for h := range s {
			s[h] = math.Pow(2, -8*float64(h+1)/float64(n))
		}
		return s
	}
	n := 1
	for n*2 <= H {
		n *= 2
	}
	sl := pow2(n)
	if n < H {
		extra := pow2(2 * n)
		for k := 0; len(sl) < H; k += 2 {
			sl = append(sl, extra[k])
		}
	}
	out := make([]float32, H)
	for h := range out {
		out[h] = float32(sl[h])
	}
	return out
}

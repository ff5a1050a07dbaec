package nativeeval

import (
	"math"

	"routebench/modelspec"
)

// refPath is PaTH's steps in float64 from ARCHITECTURE.md, with the
// transport as explicit d x d matrices (no WY form, no carried vectors).
type refPath struct {
	d     int
	w     [][][]float64   // [L][H][d]
	beta  [][]float64     // [L][H]
	G     [][]float64     // [L][H]; nil without the gate
	last  [2]int          // (head, query) of cached
	cache [][][][]float64 // transports of one query row: rows are scored in order
}

// newRefPath computes block n's steps from its normed input x ([L][D]).
func newRefPath(set *weightsView, n int, x [][]float64) *refPath {
	a := set.arch
	D, H, R, K, L := a.DModel, a.Heads, a.PathRank, a.PathConv, len(x)
	d := D / H
	p := func(s string) []float32 { return set.t(blockName(n) + s) }
	lin := func(u []float64, w []float32, m int) []float64 {
		out := make([]float64, m)
		for r, v := range u {
			for c := range out {
				out[c] += v * float64(w[r*m+c])
			}
		}
		return out
	}
	z := make([][]float64, L)
	for t := range x {
		z[t] = lin(lin(x[t], p("wpath_down"), R), p("wpath_up"), D)
	}
	rp := &refPath{d: d, w: make([][][]float64, L), beta: make([][]float64, L)}
	acc := make([]float64, H)
	for t := range x {
		y := make([]float64, D)
		for c := range y {
			for k := 0; k < K && k <= t; k++ {
				y[c] += float64(p("path_conv")[k*D+c]) * z[t-k][c]
			}
			y[c] *= 1 / (1 + math.Exp(-y[c]))
		}
		bl := lin(x[t], p("wbeta"), H)
		rp.w[t], rp.beta[t] = make([][]float64, H), make([]float64, H)
		var gl []float64
		if a.ForgetGate {
			gl = lin(x[t], p("wgate"), H)
			rp.G = append(rp.G, make([]float64, H))
		}
		for h := 0; h < H; h++ {
			var n2 float64
			for _, v := range y[h*d : h*d+d] {
				n2 += v * v
			}
			rp.w[t][h] = make([]float64, d)
			for c := range rp.w[t][h] {
				rp.w[t][h][c] = y[h*d+c] / math.Sqrt(n2+modelspec.PathNormEps)
			}
			rp.beta[t][h] = 2 / (1 + math.Exp(-(bl[h] + float64(p("bbeta")[h]))))
			if gl != nil {
				acc[h] += math.Log(1 / (1 + math.Exp(-(gl[h] + float64(p("bgate")[h])))))
				rp.G[t][h] = acc[h]
			}
		}
	}
	return rp
}

// transports returns M[j] = H_i H_{i-1} ... H_{j+1} for j = i..0 (head h),
// built right to left as explicit matrix products: M[j-1] = M[j] H_j.
func (rp *refPath) transports(h, i int) [][][]float64 {
	if rp.cache != nil && rp.last == [2]int{h, i} {
		return rp.cache[0]
	}
	d := rp.d
	M := make([][][]float64, i+1)
	cur := make([][]float64, d)
	for r := range cur {
		cur[r] = make([]float64, d)
		cur[r][r] = 1
	}
	for j := i; j >= 0; j-- {
		M[j] = cur
		next := make([][]float64, d)
		w, b := rp.w[j][h], rp.beta[j][h]
		for r := range next {
			next[r] = make([]float64, d)
			for c := range next[r] {
				for x := 0; x < d; x++ {
					hx := -b * w[x] * w[c]
					if x == c {
						hx++
					}
					next[r][c] += cur[r][x] * hx
				}
			}
		}
		cur = next
	}
	rp.last, rp.cache = [2]int{h, i}, [][][][]float64{M}
	return M
}

// logit is the reference score of (i, j) before the 1/sqrt(d) scale.
func (rp *refPath) logit(h, i, j int, q, k []float64) float64 {
	M := rp.transports(h, i)[j]
	var s float64
	for r := range M {
		for c := range M[r] {
			s += q[r] * M[r][c] * k[c]
		}
	}
	if rp.G != nil {
		s += rp.G[i][h] - rp.G[j][h]
	}
	return s
}

package model

import (
	"math"
	"testing"

	"routebench/modelspec"
	"routebench/modelspec/weights"
)

// refPath is a float64 transcription of PaTH's steps (modelspec/householder.go)
// for one block, written with loops and explicit d x d matrices,
// independently of householder_attention.go's UT transform.
type refPath struct {
	H, d int
	w    [][][]float64 // [L][H][d] unit directions
	beta [][]float64   // [L][H]
	G    [][]float64   // [L][H] prefix sums of the gate (nil without it)
}

func newRefPath(t *testing.T, set *weights.Set, l int, hs [][]float64) *refPath {
	t.Helper()
	a := set.Arch
	D, H, R, K := a.DModel, a.Heads, a.PathRank, a.PathConv
	d, L := D/H, len(hs)
	get := func(name string, shape ...int) []float32 {
		v, err := set.Get(blockName(l, name), shape...)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	lin := func(u []float64, w []float32, n int) []float64 {
		out := make([]float64, n)
		for i, x := range u {
			for j := range out {
				out[j] += x * float64(w[i*n+j])
			}
		}
		return out
	}
	norm1, down, up, conv := get("norm1", D), get(modelspec.PathDown, D, R), get(modelspec.PathUp, R, D), get(modelspec.PathConvW, K, D)
	wb, bb := get(modelspec.PathWBeta, D, H), get(modelspec.PathBBeta, H)
	z := make([][]float64, L)
	an := make([][]float64, L)
	for i, h := range hs {
		var ms float64
		for _, x := range h {
			ms += x * x
		}
		sc := 1 / math.Sqrt(ms/float64(D)+a.NormEps)
		an[i] = make([]float64, D)
		for c, x := range h {
			an[i][c] = x * sc * float64(norm1[c])
		}
		z[i] = lin(lin(an[i], down, R), up, D)
	}
	p := &refPath{H: H, d: d, w: make([][][]float64, L), beta: make([][]float64, L)}
	for i := range hs {
		y := make([]float64, D)
		for c := range y {
			for k := 0; k < K && k <= i; k++ {
				y[c] += float64(conv[k*D+c]) * z[i-k][c]
			}
			y[c] /= 1 + math.Exp(-y[c]) // SiLU
		}
		p.w[i] = make([][]float64, H)
		bl := lin(an[i], wb, H)
		p.beta[i] = make([]float64, H)
		for h := 0; h < H; h++ {
			var n2 float64
			for _, x := range y[h*d : h*d+d] {
				n2 += x * x
			}
			p.w[i][h] = make([]float64, d)
			for c := range p.w[i][h] {
				p.w[i][h][c] = y[h*d+c] / math.Sqrt(n2+modelspec.PathNormEps)
			}
			p.beta[i][h] = 2 / (1 + math.Exp(-(bl[h] + float64(bb[h]))))
		}
	}
	if a.ForgetGate {
		wg, bg := get(modelspec.FoxWGate, D, H), get(modelspec.FoxBGate, H)
		p.G = make([][]float64, L)
		acc := make([]float64, H)
		for i := range hs {
			gl := lin(an[i], wg, H)
			p.G[i] = make([]float64, H)
			for h := range acc {
				x := gl[h] + float64(bg[h])
				acc[h] += -math.Log1p(math.Exp(-x)) // log sigmoid
				p.G[i][h] = acc[h]
			}
		}
	}
	return p
}

// householder is the d x d matrix I - beta w w^T of head h at position t.
func (p *refPath) householder(h, t int) [][]float64 {
	m := make([][]float64, p.d)
	for r := range m {
		m[r] = make([]float64, p.d)
		m[r][r] = 1
		for c := range m[r] {
			m[r][c] -= p.beta[t][h] * p.w[t][h][r] * p.w[t][h][c]
		}
	}
	return m
}

// transport is the explicit product H_i H_{i-1} ... H_{j+1} of head h.
func (p *refPath) transport(h, i, j int) [][]float64 {
	m := make([][]float64, p.d)
	for r := range m {
		m[r] = make([]float64, p.d)
		m[r][r] = 1
	}
	for t := j + 1; t <= i; t++ { // m <- H_t m: the newest step on the left
		ht := p.householder(h, t)
		next := make([][]float64, p.d)
		for r := range next {
			next[r] = make([]float64, p.d)
			for c := range next[r] {
				for x := 0; x < p.d; x++ {
					next[r][c] += ht[r][x] * m[x][c]
				}
			}
		}
		m = next
	}
	return m
}

// logit is q^T H_i ... H_{j+1} k (+ G_i - G_j with the gate), unscaled.
func (p *refPath) logit(h, i, j int, q, k []float64) float64 {
	m := p.transport(h, i, j)
	var s float64
	for r := range m {
		for c := range m[r] {
			s += q[r] * m[r][c] * k[c]
		}
	}
	if p.G != nil {
		s += p.G[i][h] - p.G[j][h]
	}
	return s
}

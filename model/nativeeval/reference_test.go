package nativeeval

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
	// kerpleP, kerpleA: KERPLE's stored p_h and a_h ([H]); nil: no KERPLE bias.
	kerpleP, kerpleA []float64
	logit            func(h, i, j int, q, k []float64) float64 // PaTH: the transported q.k (+ gate); nil: q.k
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
				for c := 0; c < d && in.logit == nil; c++ {
					s[j] += q[i][c] * k[j][c]
				}
				if in.logit != nil {
					s[j] = in.logit(h, i, j, q[i], k[j])
				}
				s[j] /= math.Sqrt(float64(d))
				if in.slopes != nil {
					s[j] -= in.slopes[h] * float64(i-j)
				}
				if in.kerpleP != nil {
					s[j] -= refKerple(in.kerpleP[h], in.kerpleA[h], i-j)
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

// refKerple is minus KERPLE's bias at distance n, as ARCHITECTURE.md
// writes it: p' log(1 + a' n) with p' = max(p, 0.01), a' = max(a, 0.01).
func refKerple(p, a float64, n int) float64 {
	return math.Max(p, 0.01) * math.Log(1+math.Max(a, 0.01)*float64(n))
}

// refForward is ARCHITECTURE.md's forward in float64: logits [L][V].
func refForward(set *weightsView, tokens []int32) [][]float64 {
	return refForwardPath(set, tokens, nil)
}

// refForwardPath is refForward that also hands each block's PaTH steps to
// onPath (when not nil).
func refForwardPath(set *weightsView, tokens []int32, onPath func(n int, rp *refPath)) [][]float64 {
	a := set.arch
	L, V, D, H, d, F, P := len(tokens), a.Vocab, a.DModel, a.Heads, a.DHead(), a.DHidden, a.DHead()/2
	matmul := func(x [][]float64, w []float32, k, n int) [][]float64 {
		y := make([][]float64, len(x))
		for i, row := range x {
			y[i] = make([]float64, n)
			for kk := 0; kk < k; kk++ {
				for j := 0; j < n; j++ {
					y[i][j] += row[kk] * float64(w[kk*n+j])
				}
			}
		}
		return y
	}
	rms := func(x [][]float64, g []float32) [][]float64 {
		y := make([][]float64, len(x))
		for i, row := range x {
			var ss float64
			for _, u := range row {
				ss += u * u
			}
			inv := 1 / math.Sqrt(ss/float64(D)+a.NormEps)
			y[i] = make([]float64, D)
			for c, u := range row {
				y[i][c] = u * inv * float64(g[c])
			}
		}
		return y
	}
	h := make([][]float64, L)
	for i, x := range tokens {
		h[i] = make([]float64, D)
		for c := 0; c < D; c++ {
			h[i][c] = float64(set.t("embed")[int(x)*D+c])
		}
	}
	var psi [][]float64
	switch a.Rotation {
	case "rope":
		for i := 0; i < L; i++ {
			row := make([]float64, H*P)
			for hh := 0; hh < H; hh++ {
				for p := 0; p < P; p++ {
					th := math.Pow(a.RopeBase, -2*float64(p)/float64(d))
					if set.ropeTheta != nil {
						th = set.ropeTheta[p]
					}
					row[hh*P+p] = float64(i) * th
				}
			}
			psi = append(psi, row)
		}
	case "accumulated":
		if a.AngleProj {
			break // per block, from its input (below)
		}
		acc := make([]float64, H*P)
		for _, x := range tokens {
			for k := range acc {
				acc[k] += float64(set.t("angles")[int(x)*H*P+k])
			}
			psi = append(psi, append([]float64(nil), acc...))
		}
	}
	var slopes []float64
	if a.ALiBi {
		for _, m := range alibiSlopes(H) {
			slopes = append(slopes, float64(m))
		}
	}
	for n := 0; n < a.Layers; n++ {
		p := func(s string) []float32 { return set.t(blockName(n) + s) }
		x := rms(h, p("norm1"))
		if a.AngleProj { // psi^n_i = sum_{s<=i} x_s W_ang (modelspec/angleproj.go)
			psi = nil
			acc := make([]float64, H*P)
			for _, th := range matmul(x, p("angle_proj"), D, H*P) {
				for k := range acc {
					acc[k] += th[k]
				}
				psi = append(psi, append([]float64(nil), acc...))
			}
		}
		in := refAttnIn{L: L, H: H, d: d, q: matmul(x, p("wq"), D, D), k: matmul(x, p("wk"), D, D),
			v: matmul(x, p("wv"), D, D), psi: psi, valueRot: a.ValueRot, slopes: slopes}
		if a.KerpleLog {
			for _, x := range p("kerple_p") {
				in.kerpleP = append(in.kerpleP, float64(x))
			}
			for _, x := range p("kerple_a") {
				in.kerpleA = append(in.kerpleA, float64(x))
			}
		}
		if set.qk != 0 {
			for _, rows := range [][][]float64{in.q, in.k} {
				for _, r := range rows {
					for c := range r {
						r[c] *= set.qk
					}
				}
			}
		}
		if a.Householder {
			rp := newRefPath(set, n, x)
			in.logit = rp.logit
			if onPath != nil {
				onPath(n, rp)
			}
		}
		att, _ := refAttention(in)
		o := matmul(att, p("wo"), D, D)
		for i := range h {
			for c := range h[i] {
				h[i][c] += o[i][c]
			}
		}
		u := matmul(rms(h, p("norm2")), p("w1"), D, F)
		for i := range u {
			for c := range u[i] {
				v := u[i][c] + float64(p("b1")[c])
				u[i][c] = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
			}
		}
		y := matmul(u, p("w2"), F, D)
		for i := range h {
			for c := range h[i] {
				h[i][c] += y[i][c] + float64(p("b2")[c])
			}
		}
	}
	return matmul(rms(h, set.t("normf")), set.t("unembed"), D, V)
}

package model

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // gomlx graph code reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"routebench/modelspec"
	"routebench/modelspec/weights"
)

// refForward is a plain float64 transcription of ARCHITECTURE.md, written
// independently of graph.go (loops only), to check Forward.
func refForward(t *testing.T, set *weights.Set, x []int32) [][]float64 {
	t.Helper()
	a := set.Arch
	D, H, F, V := a.DModel, a.Heads, a.DHidden, a.Vocab
	d := D / H
	P := d / 2
	L := len(x)
	get := func(name string, shape ...int) []float32 {
		v, err := set.Get(name, shape...)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	matvec := func(u []float64, w []float32, n int) []float64 { // u[K] * w[K, n]
		out := make([]float64, n)
		for k, uk := range u {
			for j := 0; j < n; j++ {
				out[j] += uk * float64(w[k*n+j])
			}
		}
		return out
	}
	rms := func(u []float64, g []float32) []float64 {
		var ms float64
		for _, v := range u {
			ms += v * v
		}
		s := 1 / math.Sqrt(ms/float64(len(u))+a.NormEps)
		out := make([]float64, len(u))
		for i, v := range u {
			out[i] = v * s * float64(g[i])
		}
		return out
	}
	// psi[i][h][p]
	psi := make([][][]float64, L)
	var acc []float64
	var table []float32
	if a.HasAngleTable() {
		table = get("angles", V, H, P)
		acc = make([]float64, H*P)
	}
	for i := range psi {
		psi[i] = make([][]float64, H)
		for h := 0; h < H; h++ {
			psi[i][h] = make([]float64, P)
			for p := 0; p < P; p++ {
				switch a.Rotation {
				case modelspec.RotationRoPE:
					psi[i][h][p] = float64(i) * math.Pow(a.RopeBase, -2*float64(p)/float64(d))
				case modelspec.RotationAccumulated:
					if table == nil {
						continue // projected per block below
					}
					acc[h*P+p] += float64(table[(int(x[i])*H+h)*P+p])
					psi[i][h][p] = acc[h*P+p]
				}
			}
		}
	}
	rot := func(u []float64, h int, ang []float64, sign float64) { // rotates head h of u in place
		for p := 0; p < P; p++ {
			c, s := math.Cos(ang[p]), sign*math.Sin(ang[p])
			u0, u1 := u[h*d+2*p], u[h*d+2*p+1]
			u[h*d+2*p], u[h*d+2*p+1] = u0*c-u1*s, u0*s+u1*c
		}
	}
	slopes := make([]float64, H)
	for h := range slopes {
		slopes[h] = math.Pow(2, -8*float64(h+1)/float64(H))
	}
	emb := get("embed", V, D)
	hs := make([][]float64, L)
	for i := range hs {
		hs[i] = make([]float64, D)
		for j := range hs[i] {
			hs[i][j] = float64(emb[int(x[i])*D+j])
		}
	}
	for l := 0; l < a.Layers; l++ {
		b := func(n string) string { return blockName(l, n) }
		var ps *refPath
		if a.Householder {
			ps = newRefPath(t, set, l, hs)
		}
		var kp, ka []float64 // KERPLE: p' and a' per head, floored at 0.01 (ARCHITECTURE.md)
		if a.KerpleLog {
			kp, ka = make([]float64, H), make([]float64, H)
			for h, x := range get(b("kerple_p"), H) {
				kp[h] = math.Max(float64(x), 0.01)
			}
			for h, x := range get(b("kerple_a"), H) {
				ka[h] = math.Max(float64(x), 0.01)
			}
		}
		q, k, v := make([][]float64, L), make([][]float64, L), make([][]float64, L)
		if a.AngleProj { // psi^l_i = sum_{s<=i} a^l_s W_ang (modelspec/angleproj.go)
			w := get(b(modelspec.AngleProjName), D, H*P)
			run := make([]float64, H*P)
			for i := range hs {
				th := matvec(rms(hs[i], get(b("norm1"), D)), w, H*P)
				for h := 0; h < H; h++ {
					for p := 0; p < P; p++ {
						run[h*P+p] += th[h*P+p]
						psi[i][h][p] = run[h*P+p]
					}
				}
			}
		}
		for i := range hs {
			an := rms(hs[i], get(b("norm1"), D))
			q[i], k[i], v[i] = matvec(an, get(b("wq"), D, D), D), matvec(an, get(b("wk"), D, D), D), matvec(an, get(b("wv"), D, D), D)
			for h := 0; h < H && a.Rotation != modelspec.RotationNone; h++ {
				rot(q[i], h, psi[i][h], 1)
				rot(k[i], h, psi[i][h], 1)
				if a.ValueRot {
					rot(v[i], h, psi[i][h], 1)
				}
			}
		}
		for i := range hs {
			o := make([]float64, D)
			for h := 0; h < H; h++ {
				s := make([]float64, i+1)
				mx := math.Inf(-1)
				for j := 0; j <= i; j++ {
					if ps != nil {
						s[j] = ps.logit(h, i, j, q[i][h*d:h*d+d], k[j][h*d:h*d+d])
					}
					for c := 0; c < d && ps == nil; c++ {
						s[j] += q[i][h*d+c] * k[j][h*d+c]
					}
					s[j] /= math.Sqrt(float64(d))
					if a.ALiBi {
						s[j] -= slopes[h] * float64(i-j)
					}
					if a.KerpleLog {
						s[j] -= kp[h] * math.Log(1+ka[h]*float64(i-j))
					}
					mx = math.Max(mx, s[j])
				}
				var z float64
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					z += s[j]
				}
				for j := range s {
					for c := 0; c < d; c++ {
						o[h*d+c] += s[j] / z * v[j][h*d+c]
					}
				}
				if a.ValueRot {
					rot(o, h, psi[i][h], -1)
				}
			}
			att := matvec(o, get(b("wo"), D, D), D)
			for j := range att {
				hs[i][j] += att[j]
			}
		}
		for i := range hs {
			m := rms(hs[i], get(b("norm2"), D))
			u := matvec(m, get(b("w1"), D, F), F)
			b1 := get(b("b1"), F)
			for j := range u {
				z := u[j] + float64(b1[j])
				u[j] = 0.5 * z * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(z+0.044715*z*z*z)))
			}
			y := matvec(u, get(b("w2"), F, D), D)
			b2 := get(b("b2"), D)
			for j := range y {
				hs[i][j] += y[j] + float64(b2[j])
			}
		}
	}
	out := make([][]float64, L)
	for i := range hs {
		out[i] = matvec(rms(hs[i], get("normf", D)), get("unembed", D, V), V)
	}
	return out
}

// randomSet is an untrained model with larger-than-init weights, so that
// attention patterns and rotations matter in the comparison. A learned
// variant's angle table keeps its initial value (zero: identity rotations);
// randomAngleSet gives it random angles.
func randomSet(t *testing.T, variant string) (*weights.Set, Config) {
	t.Helper()
	return randomSetWith(t, variant, false)
}

// randomAngleSet is randomSet with a learned variant's angle table drawn
// uniformly from [-pi, pi) (a trained table's range): with the zero table
// every rotation is the identity, so a rotation that is wrong (a flipped
// sign, a swapped cos and sin) or missing goes unseen.
func randomAngleSet(t *testing.T, variant string) (*weights.Set, Config) {
	t.Helper()
	return randomSetWith(t, variant, true)
}

func randomSetWith(t *testing.T, variant string, angles bool) (*weights.Set, Config) {
	t.Helper()
	c, err := shapeConfig("smoke", variant, 29)
	if err != nil {
		t.Fatal(err)
	}
	c.DModel, c.Heads, c.DHidden, c.Layers = 16, 4, 24, 2
	specs := paramSpecs(c)
	vals := initParams(c, specs)
	rng := rand.New(rand.NewPCG(3, 4))
	for i, s := range specs {
		if s.Name == modelspec.AngleTable {
			if angles {
				arng := rand.New(rand.NewPCG(7, 8)) // apart from rng: the zero-angle sets stay as they were
				for j := range vals[i] {
					vals[i][j] = float32((2*arng.Float64() - 1) * math.Pi)
				}
			}
			continue
		}
		for j := range vals[i] {
			vals[i][j] += float32(rng.NormFloat64() * 0.3)
		}
	}
	set, err := exportSet(c, specs, vals)
	if err != nil {
		t.Fatal(err)
	}
	return set, c
}

func TestForwardMatchesReference(t *testing.T) {
	for _, v := range modelspec.Variants() {
		t.Run(v, func(t *testing.T) {
			worst, scale := forwardVsReference(t, v)
			if worst > 1e-4*math.Max(1, scale) {
				t.Fatalf("max |gomlx - reference| = %g (logit scale %g)", worst, scale)
			}
			t.Logf("max abs error %.2g at logit scale %.2g", worst, scale)
		})
	}
}

// forwardVsReference is the largest |gomlx - reference| logit of a random
// model of variant v on 40 tokens, and the largest reference logit.
func forwardVsReference(t *testing.T, v string) (worst, scale float64) {
	t.Helper()
	set, c := randomSet(t, v)
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]int32, 40)
	for i := range x {
		x[i] = int32(rng.IntN(c.Vocab))
	}
	got, err := forward(set, x)
	if err != nil {
		t.Fatal(err)
	}
	want := refForward(t, set, x)
	for i := range want {
		for j := range want[i] {
			e := math.Abs(float64(got[i][j]) - want[i][j])
			if math.IsNaN(e) { // math.Max passes NaN on, and NaN > tol is false: a NaN logit would pass
				e = math.Inf(1)
			}
			worst = math.Max(worst, e)
			scale = math.Max(scale, math.Abs(want[i][j]))
		}
	}
	return worst, scale
}

// forward is the training graph's full-attention forward on exported
// weights (what gomlxeval.Forward runs), for this package's tests.
func forward(set *weights.Set, tokens []int32) ([][]float32, error) {
	L := len(tokens)
	flat, c, err := RunExported(set, tokens, "", "forward", nil,
		func(w Network, p map[string]*Node, tok *Node, rot *Rotation, _ []*Node) *Node {
			bias := Const(tok.Graph(), tensors.FromFlatDataAndDimensions(attentionBias(w.Heads(), L, w.Variant().ALiBi), w.Heads(), L, L))
			return w.Logits(p, tok, rot, bias)
		})
	if err != nil {
		return nil, err
	}
	out := make([][]float32, L)
	for i := range out {
		out[i] = flat[i*c.Vocab : (i+1)*c.Vocab]
	}
	return out, nil
}

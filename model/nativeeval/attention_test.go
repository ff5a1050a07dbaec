package nativeeval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"routebench/internal/kerneltest"
	"routebench/modelspec"
	"testing"
)

// tolAttn: the kernel's output error is driven by float32 rounding of the
// scores (relative eps * |s|, so a logit of magnitude M moves weights by
// ~eps*M), of cos/sin and of the sums. We allow
//
//	|out - ref| <= tolAttn * (1 + M_i) * Vmax
//
// per output element, with M_i = max_j (sum_c |q_ic k_jc| / sqrt(d) + |bias_ij|)
// and Vmax the largest |v| of the head. tolAttn = 2e-6 is ~34 float32 eps;
// the worst case measured over all flavours at L=200 was 2e-8 on this scale.
// A wrong mask, block edge or rotation gives errors of order Vmax/(1+M).
const tolAttn = 2e-6

type attnCase struct {
	name     string
	rotation string // none, rope, accumulated
	valueRot bool
	alibi    bool
	kerple   bool
}

var attnCases = []attnCase{
	{"nope", "none", false, false, false},
	{"rope", "rope", false, false, false},
	{"alibi", "none", false, true, false},
	{"acc-qk", "accumulated", false, false, false},
	{"acc-qkv", "accumulated", true, false, false},
	{"acc-qkv-alibi", "accumulated", true, true, false}, // random-qkv-alibi
	{"kerple", "none", false, false, true},              // kerple-log
}

// attnProblem draws a random problem and returns the kernel's inputs and the
// reference's.
func attnProblem(r *rand.Rand, c attnCase, L, H, d int) (*attnShape, []float32, refAttnIn) {
	D, P := H*d, d/2
	qkv := randSlice(r, L*3*D, 1)
	in := refAttnIn{L: L, H: H, d: d, valueRot: c.valueRot}
	for i := 0; i < L; i++ {
		row := func(off int) []float64 {
			x := make([]float64, D)
			for t := range x {
				x[t] = float64(qkv[i*3*D+off+t])
			}
			return x
		}
		in.q, in.k, in.v = append(in.q, row(0)), append(in.k, row(D)), append(in.v, row(2*D))
	}
	s := &attnShape{L: L, H: H, d: d, valueRot: c.valueRot}
	switch c.rotation {
	case "rope":
		s.cs = ropeCosSin(L, H, modelspec.RopeFrequencies(d, 10000), 1, 2)
		for i := 0; i < L; i++ {
			psi := make([]float64, H*P)
			for h := 0; h < H; h++ {
				for p := 0; p < P; p++ {
					psi[h*P+p] = float64(i) * math.Pow(10000, -2*float64(p)/float64(d))
				}
			}
			in.psi = append(in.psi, psi)
		}
	case "accumulated":
		V := 11
		table := randSlice(r, V*H*P, 1)
		toks := make([]int32, L)
		acc := make([]float64, H*P)
		for i := range toks {
			toks[i] = int32(r.IntN(V))
			for k := range acc {
				acc[k] += float64(table[int(toks[i])*H*P+k])
			}
			in.psi = append(in.psi, append([]float64(nil), acc...))
		}
		s.cs = accumulatedCosSin(toks, table, H, d, 2)
	}
	if c.alibi {
		s.slopes = alibiSlopes(H)
		for _, m := range s.slopes {
			in.slopes = append(in.slopes, float64(m))
		}
	}
	if c.kerple {
		p, a := kerpleHeads(r, H)
		s.kerple = kerpleTables(nil, p, a, L, 2)
		for h := range p {
			in.kerpleP, in.kerpleA = append(in.kerpleP, float64(p[h])), append(in.kerpleA, float64(a[h]))
		}
	}
	return s, qkv, in
}

// kerpleHeads draws KERPLE's p_h and a_h as the init does (U(0, 2), U(0,
// 1)), with the last head's a below the floor, which the bias must apply.
func kerpleHeads(r *rand.Rand, H int) (p, a []float32) {
	for h := 0; h < H; h++ {
		p, a = append(p, float32(2*r.Float64())), append(a, float32(r.Float64()))
	}
	a[H-1] = 0.003
	return p, a
}

// runKernel scatters qkv rows block by block, as the forward does, and attends.
func runKernel(s *attnShape, qkv []float32, workers int, dists []int) ([]float32, *layerDiag) {
	D := s.H * s.d
	b := newHeadBufs(s)
	for row0 := 0; row0 < s.L; row0 += blockK {
		n := min(blockK, s.L-row0)
		x := qkv[row0*3*D:]
		b.scatterRows(s, row0, n, x, x[D:], x[2*D:], 3*D)
	}
	out := make([]float32, s.L*D)
	var diag *layerDiag
	if dists != nil {
		diag = newLayerDiag(s.H, s.L, dists)
	}
	b.attend(s, out, workers, diag)
	return out, diag
}

func checkAttention(t *testing.T, s *attnShape, in refAttnIn, got []float32, ref [][]float64) {
	t.Helper()
	L, H, d := s.L, s.H, s.d
	for h := 0; h < H; h++ {
		var vmax float64
		for j := 0; j < L; j++ {
			for c := 0; c < d; c++ {
				vmax = math.Max(vmax, math.Abs(in.v[j][h*d+c]))
			}
		}
		for i := 0; i < L; i++ {
			var M float64
			for j := 0; j <= i; j++ {
				var m float64
				for c := 0; c < d; c++ {
					m += math.Abs(in.q[i][h*d+c] * in.k[j][h*d+c])
				}
				m /= math.Sqrt(float64(d))
				if in.slopes != nil {
					m += in.slopes[h] * float64(i-j)
				}
				if in.kerpleP != nil {
					m += refKerple(in.kerpleP[h], in.kerpleA[h], i-j)
				}
				M = math.Max(M, m)
			}
			tol := tolAttn * (1 + M) * vmax
			for c := 0; c < d; c++ {
				g, w := float64(got[i*H*d+h*d+c]), ref[i][h*d+c]
				if !(math.Abs(g-w) <= tol) {
					t.Fatalf("head %d row %d col %d: got %.7g, want %.7g (tol %.2g)", h, i, c, g, w, tol)
				}
			}
		}
	}
}

// TestAttentionMatchesReference covers block edges (blockK = blockQ = 64):
// L = 1, 63, 64, 65, 127, 128, 129, odd primes; head widths that take the
// vector path (32, 16) and the portable one (8); every variant flavour.
func TestAttentionMatchesReference(t *testing.T) {
	lengths := []int{1, 2, 63, 64, 65, 97, 127, 128, 129, 131, 200}
	if testing.Short() {
		lengths = []int{1, 63, 64, 65, 131}
	}
	kerneltest.Each(t, func(t *testing.T) {
		for _, c := range attnCases {
			for _, d := range []int{32, 8, 16} {
				for _, L := range lengths {
					t.Run(fmt.Sprintf("%s/d=%d/L=%d", c.name, d, L), func(t *testing.T) {
						r := rand.New(rand.NewPCG(uint64(L), uint64(d)))
						s, qkv, in := attnProblem(r, c, L, 2, d)
						ref, _ := refAttention(in)
						got, _ := runKernel(s, qkv, 2, nil)
						checkAttention(t, s, in, got, ref)
					})
				}
			}
		}
	})
}

// TestAttentionLargeLogits: scores far from 0 (scaled q, k) and strong ALiBi
// slopes stress the online max/rescale logic.
func TestAttentionLargeLogits(t *testing.T) {
	kerneltest.Each(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 9))
		s, qkv, in := attnProblem(r, attnCase{"alibi", "accumulated", true, true, false}, 150, 3, 32)
		for i := range qkv {
			qkv[i] *= 4
		}
		for i := range in.q {
			for c := range in.q[i] {
				in.q[i][c] *= 4
				in.k[i][c] *= 4
				in.v[i][c] *= 4
			}
		}
		ref, _ := refAttention(in)
		got, _ := runKernel(s, qkv, 2, nil)
		checkAttention(t, s, in, got, ref)
	})
}

// TestDiagnosticsMatchReference: far mass and entropy from the second
// streaming pass equal sums over the reference weights. Masses are in [0,1]
// and entropies of order log L: absolute tolerances 2e-5 and 1e-4 cover
// float32 weights summed in float64.
func TestDiagnosticsMatchReference(t *testing.T) {
	kerneltest.Each(t, func(t *testing.T) {
		for _, c := range attnCases {
			for _, L := range []int{1, 65, 200} {
				r := rand.New(rand.NewPCG(uint64(L), 77))
				s, qkv, in := attnProblem(r, c, L, 2, 32)
				_, alpha := refAttention(in)
				dists := []int{0, 3, 64, 100, 1000}
				_, diag := runKernel(s, qkv, 2, dists)
				if e := diagError(diag, alpha, dists); e > 1 {
					t.Fatalf("%s L=%d: entropy or far mass differs from the float64 weights by %.3g tolerances (1e-4 nats, 2e-5)", c.name, L, e)
				}
			}
		}
	})
}

func TestAlibiSlopes(t *testing.T) {
	want := map[int][]float64{
		4: {1.0 / 4, 1.0 / 16, 1.0 / 64, 1.0 / 256},
		// H=6: the 4 slopes of H=4, then slopes 0 and 2 (0-based) of H=8,
		// whose slopes are 2^-1 ... 2^-8.
		6: {1.0 / 4, 1.0 / 16, 1.0 / 64, 1.0 / 256, 1.0 / 2, 1.0 / 8},
	}
	for H, w := range want {
		got := alibiSlopes(H)
		for h := range w {
			if math.Abs(float64(got[h])-w[h]) > 1e-7*w[h] {
				t.Errorf("H=%d: slope %d = %g, want %g", H, h, got[h], w[h])
			}
		}
	}
}

// TestAttentionAPI: the exported standalone kernel (used by bench/) gives
// the reference's output, with the rotation table built from a spec.
func TestAttentionAPI(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	a, err := NewAttention(AttentionSpec{L: 77, Heads: 2, DHead: 32, Rotation: "rope", RopeBase: 10000, ALiBi: true})
	if err != nil {
		t.Fatal(err)
	}
	_, qkv, in := attnProblem(r, attnCase{"rope-alibi", "rope", false, true, false}, 77, 2, 32)
	ref, _ := refAttention(in)
	out := make([]float32, 77*64)
	a.Run(out, qkv, 2)
	checkAttention(t, a.s, in, out, ref)
	if got, want := a.FLOPs(), 4*77.0*77/2*32*2; got != want {
		t.Errorf("FLOPs = %g, want %g", got, want)
	}
	for _, bad := range []AttentionSpec{
		{L: 0, Heads: 1, DHead: 2, Rotation: "none"},
		{L: 4, Heads: 1, DHead: 3, Rotation: "none"},
		{L: 4, Heads: 1, DHead: 2, Rotation: "spiral"},
		{L: 4, Heads: 1, DHead: 2, Rotation: "none", ValueRot: true},
		{L: 2, Heads: 1, DHead: 2, Rotation: "accumulated", Tokens: []int32{0, 5}, Angles: make([]float32, 3)},
		{L: 4, Heads: 2, DHead: 2, Rotation: "none", KerpleP: make([]float32, 2), KerpleA: make([]float32, 1)},
		{L: 4, Heads: 2, DHead: 2, Rotation: "none", KerpleP: make([]float32, 2)},
		{L: 4, Heads: 2, DHead: 2, Rotation: "none", ALiBi: true, KerpleP: make([]float32, 2), KerpleA: make([]float32, 2)},
	} {
		if _, err := NewAttention(bad); err == nil {
			t.Errorf("NewAttention(%+v) accepted a bad spec", bad)
		}
	}
}

// TestAttentionAPIKerple: the standalone kernel with KERPLE's p_h and a_h
// in the spec (the kernelspeed problem of kerple-log) gives the reference's
// output at a length across three key blocks.
func TestAttentionAPIKerple(t *testing.T) {
	const L, H, d = 150, 2, 32
	_, qkv, in := attnProblem(rand.New(rand.NewPCG(4, 5)), attnCase{"kerple", "none", false, false, true}, L, H, d)
	var p, a []float32
	for h := range in.kerpleP {
		p, a = append(p, float32(in.kerpleP[h])), append(a, float32(in.kerpleA[h]))
	}
	at, err := NewAttention(AttentionSpec{L: L, Heads: H, DHead: d, Rotation: "none", KerpleP: p, KerpleA: a})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := refAttention(in)
	out := make([]float32, L*H*d)
	at.Run(out, qkv, 2)
	checkAttention(t, at.s, in, out, ref)
}

func randSlice(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * scale)
	}
	return x
}

// TestAttentionAPIPath checks the standalone PaTH attention (the bench
// stage's problem) against a float64 loop that carries each query
// backwards through H_i ... H_{j+1} one Householder step at a time, at a
// length that crosses three key blocks, at head width 16 (the portable
// kernels) and 32 (the vector kernels); the "order" mutation must fail it.
func TestAttentionAPIPath(t *testing.T) {
	for _, d := range []int{16, 32} {
		t.Run(fmt.Sprintf("d=%d", d), func(t *testing.T) { testAttentionAPIPath(t, d) })
	}
}

func testAttentionAPIPath(t *testing.T, d int) {
	const L, H = 150, 2
	D := H * d
	r := rand.New(rand.NewPCG(9, 9))
	qkv := randSlice(r, L*3*D, 1)
	st := randomSteps(H*L, d, 0, 9) // [H][L][d] unit directions are H*L rows
	w, beta := st.w, st.beta
	for i := range beta {
		beta[i] = float32(2 * r.Float64())
	}
	ref := make([][]float64, L) // [L][D]
	for i := range ref {
		ref[i] = make([]float64, D)
	}
	for h := 0; h < H; h++ {
		for i := 0; i < L; i++ {
			u := make([]float64, d)
			for c := range u {
				u[c] = float64(qkv[i*3*D+h*d+c]) / math.Sqrt(float64(d))
			}
			logits := make([]float64, i+1)
			mx := math.Inf(-1)
			for j := i; j >= 0; j-- {
				var s float64
				for c := range u {
					s += u[c] * float64(qkv[j*3*D+D+h*d+c])
				}
				logits[j], mx = s, math.Max(mx, s)
				wj, a := w[(h*L+j)*d:(h*L+j)*d+d], 0.0 // u <- H_j u
				for c := range u {
					a += u[c] * float64(wj[c])
				}
				for c := range u {
					u[c] -= float64(beta[h*L+j]) * a * float64(wj[c])
				}
			}
			var z float64
			for j := range logits {
				logits[j] = math.Exp(logits[j] - mx)
				z += logits[j]
			}
			for j, p := range logits {
				for c := 0; c < d; c++ {
					ref[i][h*d+c] += p / z * float64(qkv[j*3*D+2*D+h*d+c])
				}
			}
		}
	}
	run := func() float64 {
		a, err := NewAttention(AttentionSpec{L: L, Heads: H, DHead: d, Rotation: "none", PathW: w, PathBeta: beta})
		if err != nil {
			t.Fatal(err)
		}
		// Per pair 4d + 2d^2/64, per token 16 * 64 d + 64^2 (pathFLOPs), by
		// hand: d 16: 2 (11,250 x 72 + 150 x 20,480) = 7,764,000; d 32:
		// 2 (11,250 x 160 + 150 x 36,864) = 14,659,200.
		want := map[int]float64{16: 7764000, 32: 14659200}[d]
		if got := a.FLOPs(); got != want {
			t.Errorf("FLOPs = %g, want %g", got, want)
		}
		out := make([]float32, L*D)
		a.Run(out, qkv, 2)
		var worst float64
		for i := range ref {
			for c, x := range ref[i] {
				worst = math.Max(worst, math.Abs(float64(out[i*D+c])-x))
			}
		}
		return worst
	}
	e0 := run()
	t.Logf("largest output difference %.3g", e0)
	if e := e0; e > 1e-4 {
		t.Errorf("PaTH attention differs from the float64 loop by %.3g (tolerance 1e-4)", e)
	}
	pathBroken = "order"
	e := run()
	pathBroken = ""
	t.Logf("reversed order: %.3g", e)
	if e < 1e-2 {
		t.Errorf("the reversed product order still agrees (%.3g): the check cannot fail", e)
	}
	for _, bad := range []AttentionSpec{
		{L: L, Heads: H, DHead: d, Rotation: "rope", RopeBase: 10000, PathW: w, PathBeta: beta},
		{L: L, Heads: H, DHead: d, Rotation: "none", PathW: w[:10], PathBeta: beta},
	} {
		if _, err := NewAttention(bad); err == nil {
			t.Errorf("NewAttention accepted a bad PaTH spec (rotation %q, %d directions)", bad.Rotation, len(bad.PathW))
		}
	}
}

package nativeeval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"routebench/modelspec/weights/weightstest"
)

// pathLogitError is the largest |native - reference| logit of a random
// PaTH model on L tokens, relative to tolLogit's scale (1 + max |ref|):
// below 1 means the forward agrees.
func pathLogitError(t *testing.T, variant string, L int) float64 {
	t.Helper()
	a := variantArch(variant)
	set := weightstest.RandomSet(t, a, uint64(L))
	m, err := Load(set)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(L), 5))
	toks := make([]int32, L)
	for i := range toks {
		toks[i] = int32(r.IntN(a.Vocab))
	}
	res, err := m.LogProbs(context.Background(), toks, nil, Options{ReturnLogits: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ref := refForward(&weightsView{arch: a, set: set}, toks)
	var worst float64
	for i := range ref {
		var mx float64
		for _, x := range ref[i] {
			mx = math.Max(mx, math.Abs(x))
		}
		for c, x := range ref[i] {
			worst = math.Max(worst, math.Abs(float64(res.Logits[i][c])-x)/(tolLogit*(1+mx)))
		}
	}
	return worst
}

// TestPathMutationsFail breaks one piece of the streaming PaTH at a time:
// the float64 reference comparison (TestForwardMatchesReference's
// tolerance) must fail. L = 131 covers the diagonal block and two earlier
// key blocks.
func TestPathMutationsFail(t *testing.T) {
	for _, tc := range []struct{ piece, variant string }{{"gate", "path-fox"}, {"conv", "path"}, {"order", "path"}, {"order", "path-fox"}, {"solve", "path"}} {
		t.Run(tc.piece+"/"+tc.variant, func(t *testing.T) {
			if e := pathLogitError(t, tc.variant, 131); e > 1 {
				t.Fatalf("unbroken %s already disagrees (%.3g tolerances)", tc.variant, e)
			}
			pathBroken = tc.piece
			defer func() { pathBroken = "" }()
			e := pathLogitError(t, tc.variant, 131)
			if e <= 1 {
				t.Fatalf("with %s broken the forward still matches the reference (%.3g tolerances)", tc.piece, e)
			}
			t.Logf("broken %s: error %.3g tolerances", tc.piece, e)
		})
	}
}

// randomSteps is one head of L unit directions (d wide) with every beta
// equal to beta, as pathSteps.
func randomSteps(L, d int, beta float32, seed uint64) *pathSteps {
	r := rand.New(rand.NewPCG(seed, 9))
	st := &pathSteps{w: make([]float32, L*d), beta: make([]float32, L)}
	for t := 0; t < L; t++ {
		var n2 float64
		w := st.w[t*d : t*d+d]
		for c := range w {
			w[c] = float32(r.NormFloat64())
			n2 += float64(w[c]) * float64(w[c])
		}
		for c := range w {
			w[c] /= float32(math.Sqrt(n2))
		}
		st.beta[t] = beta
	}
	return st
}

// carriedNorms carries a random query from the end of an L-token window
// back to its start through the key blocks' products Pi (the evaluator's
// own path, pathBlocks.leave) and returns |u| / |q| after each block.
func carriedNorms(L, d int, beta float32) []float64 {
	s := &attnShape{L: L, H: 1, d: d}
	bufs := newHeadBufs(s)
	st := randomSteps(L, d, beta, uint64(L))
	pb := newPathBlocks(s, bufs, st, 0, nil)
	r := rand.New(rand.NewPCG(3, 3))
	u, u2 := make([]float32, d), make([]float32, d)
	var q2 float64
	for c := range u {
		u[c] = float32(r.NormFloat64())
		q2 += float64(u[c]) * float64(u[c])
	}
	var out []float64
	for kb := s.nkb() - 1; kb >= 0; kb-- {
		pb.leave(u2, u, kb, 1, d)
		u, u2 = u2, u
		var n2 float64
		for _, x := range u {
			n2 += float64(x) * float64(x)
		}
		out = append(out, math.Sqrt(n2/q2))
	}
	return out
}

// TestPathTransportNorms: with beta = 2 every step is a reflection, so the
// carried query keeps its norm; in float32 through 65,536 steps (1,024 key
// blocks in WY form) the measured drift was 2.5e-6 (tolerance 1e-4: no
// renormalisation needed). With beta in (0, 2) a step has eigenvalue
// 1 - beta along w_t, so norms shrink: for isotropic w by about
// exp(-n beta (2 - beta) / (2 d)) after n steps, logged here.
func TestPathTransportNorms(t *testing.T) {
	L := 65536
	if testing.Short() {
		L = 8192
	}
	const d = 32
	norms := carriedNorms(L, d, 2)
	var worst float64
	for _, n := range norms {
		worst = math.Max(worst, math.Abs(n-1))
	}
	if worst > 1e-4 {
		t.Fatalf("beta = 2: |u|/|q| drifted by %.3g over %d steps (tolerance 1e-4)", worst, L)
	}
	t.Logf("beta = 2, %d steps, d = %d: largest |u|/|q| - 1 = %.3g (final %.9f)", L, d, worst, norms[len(norms)-1])
	for _, beta := range []float32{1, 1.9, 1.99} {
		n := carriedNorms(4096, d, beta)
		pred := func(steps int) float64 { return math.Exp(-float64(steps) * float64(beta*(2-beta)) / (2 * d)) }
		t.Logf("beta = %.2f: |u|/|q| after 64, 1024, 4096 steps: %.3g %.3g %.3g (isotropic prediction %.3g %.3g %.3g)",
			beta, n[0], n[15], n[63], pred(64), pred(1024), pred(4096))
		if n[63] >= 1 {
			t.Errorf("beta = %.2f: the norm did not shrink", beta)
		}
	}
}

// BenchmarkPathAttention times one layer's streaming PaTH attention (steps
// given, block preparation included, into the buffers of the run before,
// as a forward's later layers and the Attention API reuse them) at L = 1,024 and 4,096, 4 heads of 32
// (the cpu profile's heads), without and with PaTH-FoX's forgetting gate. Metrics: GFLOP/s by pathFLOPs (score, value
// and the query's transport) and by the plain-attention count
// (4 L^2/2 d H), and tokens/s.
//
//	go test -tags noxla -run '^$' -bench PathAttention -benchtime 5x ./model/nativeeval/
func BenchmarkPathAttention(b *testing.B) {
	for _, v := range []string{"path", "path-fox"} {
		for _, L := range []int{1024, 4096} {
			b.Run(fmt.Sprintf("variant=%s/L=%d", v, L), func(b *testing.B) { benchPathAttention(b, L, v == "path-fox") })
		}
	}
}

func benchPathAttention(b *testing.B, L int, gate bool) {
	const H, d = 4, 32
	s := &attnShape{L: L, H: H, d: d}
	bufs := newHeadBufs(s)
	r := rand.New(rand.NewPCG(1, 2))
	for _, x := range [][]float32{bufs.q, bufs.kt, bufs.v} {
		for i := range x {
			x[i] = float32(r.NormFloat64()) * 0.3
		}
	}
	st := &pathSteps{w: make([]float32, H*L*d), beta: make([]float32, H*L)}
	for h := 0; h < H; h++ {
		one := randomSteps(L, d, 1.5, uint64(h))
		copy(st.w[h*L*d:], one.w)
		copy(st.beta[h*L:], one.beta)
	}
	if gate { // prefix sums of log-sigmoid gates near 0.9 (the forgetting gate's G)
		st.G = make([]float64, H*L)
		for h := 0; h < H; h++ {
			var g float64
			for i := 0; i < L; i++ {
				g += math.Log(1 / (1 + math.Exp(-2-r.NormFloat64())))
				st.G[h*L+i] = g
			}
		}
	}
	out := make([]float32, L*H*d)
	pb := newPathBlocks(s, bufs, st, 0, nil) // warm: the timed runs reuse its buffers, as a forward's later layers do
	pathAttend(s, bufs, st, pb, out, 0, nil)
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		pb = newPathBlocks(s, bufs, st, 0, pb)
		pathAttend(s, bufs, st, pb, out, 0, nil)
	}
	sec := time.Since(t0).Seconds() / float64(b.N)
	b.ReportMetric(pathFLOPs(L, H, d)/sec/1e9, "GFLOP/s")
	b.ReportMetric(4*float64(L)*float64(L)/2*d*H/sec/1e9, "plain-GFLOP/s")
	b.ReportMetric(float64(L)/sec, "tokens/s")
}

package nativeeval

import (
	"context"
	"math"
	"math/rand/v2"
	"routebench/modelspec/weights/weightstest"
	"testing"
)

// refBin is the log2-distance bin written independently of ProbeBin.
func refBin(delta int) int {
	if delta == 0 {
		return 0
	}
	return int(math.Floor(math.Log2(float64(delta)))) + 1
}

// refProbe summarises one query row from float64 logits and values.
func refProbe(logit []float64, v [][]float64, i, far int) (bins []ProbeBinStats, farMass, farCoh, lambda float64) {
	mx, mn := math.Inf(-1), math.Inf(1)
	for _, x := range logit {
		mx, mn = math.Max(mx, x), math.Min(mn, x)
	}
	a := make([]float64, len(logit))
	var z float64
	for j, x := range logit {
		a[j] = math.Exp(x - mx)
		z += a[j]
	}
	bins = make([]ProbeBinStats, refBin(i)+1)
	sums := make([][]float64, len(bins))
	norms := make([]float64, len(bins))
	s2 := make([]float64, len(bins))
	fo, fn := make([]float64, len(v[0])), 0.0
	for j := range logit {
		a[j] /= z
		b := refBin(i - j)
		if sums[b] == nil {
			sums[b] = make([]float64, len(v[0]))
		}
		bins[b].Sources++
		bins[b].Mass += a[j]
		bins[b].LogitMean += logit[j]
		s2[b] += logit[j] * logit[j]
		var vn float64
		for c, x := range v[j] {
			sums[b][c] += a[j] * x
			vn += x * x
			if i-j > far {
				fo[c] += a[j] * x
			}
		}
		norms[b] += a[j] * math.Sqrt(vn)
		if i-j > far {
			farMass += a[j]
			fn += a[j] * math.Sqrt(vn)
		}
	}
	for b := range bins {
		if bins[b].Sources == 0 {
			continue
		}
		n := float64(bins[b].Sources)
		bins[b].LogitMean /= n
		bins[b].LogitSD = math.Sqrt(math.Max(0, s2[b]/n-bins[b].LogitMean*bins[b].LogitMean))
		bins[b].Coherence = norm(sums[b]) / norms[b]
	}
	if fn > 0 {
		farCoh = norm(fo) / fn
	}
	return bins, farMass, farCoh, (mx - mn) / 2
}

// probeError is the largest difference between the probe's rows and the
// float64 reference over every figure.
func probeError(t *testing.T, got ProbeRow, bins []ProbeBinStats, farMass, farCoh, lambda float64) float64 {
	t.Helper()
	worst := math.Abs(got.FarMass-farMass) + math.Abs(got.FarCoherence-farCoh) + math.Abs(got.Lambda-lambda)
	if len(got.Bins) != len(bins) {
		return math.Inf(1)
	}
	for b := range bins {
		g, w := got.Bins[b], bins[b]
		if g.Sources != w.Sources {
			return math.Inf(1)
		}
		for _, e := range []float64{g.Mass - w.Mass, g.LogitMean - w.LogitMean, g.LogitSD - w.LogitSD, g.Coherence - w.Coherence} {
			worst = math.Max(worst, math.Abs(e))
		}
	}
	return worst
}

// probeCase runs the kernel and the probe on one attention flavour and
// returns the worst difference against the reference and the worst
// output error the probe reports.
func probeCase(t *testing.T, c attnCase, L, far int, queries []int) (worst, outErr float64) {
	r := rand.New(rand.NewPCG(39, uint64(len(c.name))))
	H, d := 2, 8
	s, qkv, in := attnProblem(r, c, L, H, d)
	D := H * d
	b := newHeadBufs(s)
	for row0 := 0; row0 < L; row0 += blockK {
		x := qkv[row0*3*D:]
		b.scatterRows(s, row0, min(blockK, L-row0), x, x[D:], x[2*D:], 3*D)
	}
	att := make([]float32, L*D)
	b.attend(s, att, 2, nil)
	rows := probeLayer(s, b, nil, att, 0, queries, far, 2)
	P := d / 2
	for _, row := range rows {
		h, i := row.Head, row.Query
		head := func(x []float64) []float64 { return x[h*d : h*d+d] }
		qi := head(in.q[i])
		if in.psi != nil {
			qi = rot(qi, in.psi[i][h*P:h*P+P], 1)
		}
		logit := make([]float64, i+1)
		vs := make([][]float64, i+1)
		for j := 0; j <= i; j++ {
			kj, vj := head(in.k[j]), head(in.v[j])
			if in.psi != nil {
				kj = rot(kj, in.psi[j][h*P:h*P+P], 1)
				if in.valueRot {
					vj = rot(vj, in.psi[j][h*P:h*P+P], 1)
				}
			}
			for x := range kj {
				logit[j] += qi[x] * kj[x]
			}
			logit[j] /= math.Sqrt(float64(d))
			if in.slopes != nil {
				logit[j] -= in.slopes[h] * float64(i-j)
			}
			if in.kerpleP != nil {
				logit[j] -= refKerple(in.kerpleP[h], in.kerpleA[h], i-j)
			}
			vs[j] = vj
		}
		bins, fm, fc, lam := refProbe(logit, vs, i, far)
		worst = math.Max(worst, probeError(t, row, bins, fm, fc, lam))
		outErr = math.Max(outErr, row.OutErr)
	}
	return worst, outErr
}

// TestProbeMatchesReference checks every figure of the probe against
// float64 rows built from the reference's rotated queries, keys and
// values, for every attention flavour, at queries across several key
// blocks; and that the probe's own output check agrees with the kernel.
func TestProbeMatchesReference(t *testing.T) {
	queries := []int{0, 1, 63, 64, 130, 199}
	for _, c := range attnCases {
		worst, outErr := probeCase(t, c, 200, 16, queries)
		if worst > 2e-5 {
			t.Errorf("%s: probe differs from the float64 reference by %.3g", c.name, worst)
		}
		if outErr > 1e-4 {
			t.Errorf("%s: probe row output differs from the kernel's by %.3g (relative)", c.name, outErr)
		}
	}
}

// TestProbeMutationsFail proves the reference comparison can fail: a
// distance one bin off must be caught.
func TestProbeMutationsFail(t *testing.T) {
	probeBroken = "bin"
	defer func() { probeBroken = "" }()
	worst, _ := probeCase(t, attnCases[3], 200, 16, []int{130, 199})
	if worst <= 2e-5 {
		t.Fatalf("a distance one bin off went unnoticed (worst difference %.3g)", worst)
	}
}

// TestProbePath checks the PaTH rows (the query carried back through the
// steps one at a time) against the float64 weights of pathProblem and the
// streaming PaTH attention's output.
func TestProbePath(t *testing.T) {
	L, H, d := 150, 2, 8
	s, bufs, st, alpha := pathProblem(L, H, d, 7)
	att := make([]float32, L*H*d)
	pb := newPathBlocks(s, bufs, st, 2, nil)
	pathAttend(s, bufs, st, pb, att, 2, nil)
	rows := probeLayer(s, bufs, st, att, 0, []int{5, 64, 149}, 16, 2)
	for _, row := range rows {
		a := alpha[row.Head][row.Query]
		mass := make([]float64, refBin(row.Query)+1)
		var far float64
		for j, x := range a {
			mass[refBin(row.Query-j)] += x
			if row.Query-j > 16 {
				far += x
			}
		}
		for b, m := range mass {
			if e := math.Abs(row.Bins[b].Mass - m); e > 1e-5 {
				t.Errorf("head %d query %d bin %d: mass %.6f, reference %.6f", row.Head, row.Query, b, row.Bins[b].Mass, m)
			}
		}
		if math.Abs(row.FarMass-far) > 1e-5 {
			t.Errorf("head %d query %d: far mass %.6f, reference %.6f", row.Head, row.Query, row.FarMass, far)
		}
		if row.OutErr > 1e-4 {
			t.Errorf("head %d query %d: row output differs from PaTH attention by %.3g", row.Head, row.Query, row.OutErr)
		}
		if row.FarMass < row.Bound-1e-12 {
			t.Errorf("head %d query %d: far mass %.6f below its bound %.6f", row.Head, row.Query, row.FarMass, row.Bound)
		}
	}
}

// TestFarBound checks the bound on hand-made logit sets: attained when
// every near logit is lambda and every far one -lambda, held by random
// rows, and violated once its sign is broken.
func TestFarBound(t *testing.T) {
	M, K, lam := 6, 3, 1.5
	logit := make([]float64, 0, M+K)
	for range M {
		logit = append(logit, -lam)
	}
	for range K {
		logit = append(logit, lam)
	}
	var z, far float64
	for j, x := range logit {
		z += math.Exp(x)
		if j < M {
			far += math.Exp(x)
		}
	}
	if got, want := FarBound(M, K, lam), far/z; math.Abs(got-want) > 1e-12 {
		t.Fatalf("bound %.12f, attained far mass %.12f", got, want)
	}
	r := rand.New(rand.NewPCG(1, 2))
	check := func() (held bool) {
		held = true
		for range 200 {
			n := 2 + r.IntN(40)
			m := 1 + r.IntN(n-1)
			ls := make([]float64, n)
			mx, mn := math.Inf(-1), math.Inf(1)
			for j := range ls {
				ls[j] = 3 * r.NormFloat64()
				mx, mn = math.Max(mx, ls[j]), math.Min(mn, ls[j])
			}
			var z, f float64
			for j, x := range ls {
				z += math.Exp(x)
				if j < m {
					f += math.Exp(x)
				}
			}
			if f/z < FarBound(m, n-m, (mx-mn)/2)-1e-12 {
				held = false
			}
		}
		return held
	}
	if !check() {
		t.Fatal("the far-mass bound failed on a random row")
	}
	probeBroken = "bound"
	defer func() { probeBroken = "" }()
	if check() {
		t.Fatal("a bound with the wrong sign held on every random row: the check cannot fail")
	}
}

// TestProbePathFoxGate checks the gated PaTH rows (FoX's G_i - G_j inside
// the scale) against the streaming attention's output, and that the gate
// changes them (a probe that ignored it would fail the output check).
func TestProbePathFoxGate(t *testing.T) {
	L, H, d := 150, 2, 8
	s, bufs, st, _ := pathProblem(L, H, d, 9)
	r := rand.New(rand.NewPCG(3, 4))
	st.G = make([]float64, H*L)
	for h := 0; h < H; h++ {
		var acc float64
		for i := 0; i < L; i++ {
			acc -= 0.3 * r.Float64()
			st.G[h*L+i] = acc
		}
	}
	att := make([]float32, L*H*d)
	pathAttend(s, bufs, st, newPathBlocks(s, bufs, st, 2, nil), att, 2, nil)
	gated := probeLayer(s, bufs, st, att, 0, []int{3, 100, 149}, 16, 2)
	G := st.G
	st.G = nil
	ungated := probeLayer(s, bufs, st, att, 0, []int{3, 100, 149}, 16, 2)
	st.G = G
	var worstGated, worstUngated float64
	for k := range gated {
		worstGated = math.Max(worstGated, gated[k].OutErr)
		worstUngated = math.Max(worstUngated, ungated[k].OutErr)
	}
	if worstGated > 1e-4 {
		t.Errorf("gated PaTH probe rows differ from the streaming output by %.3g", worstGated)
	}
	if worstUngated < 1e-3 {
		t.Errorf("probe rows without the gate match the gated output (%.3g): the output check cannot see the gate", worstUngated)
	}
}

// TestProbeEveryVariant runs the probe inside LogProbs for every registry
// variant: its rows agree with each layer's streaming output (so they are
// the model's rows: rotation, transport, bias, steps and gate as the pass
// applies them), the far mass respects its bound, and turning the probe
// on changes no log-prob bit.
func TestProbeEveryVariant(t *testing.T) {
	L := 131
	queries := []int{0, 40, 100, 130}
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			a := variantArch(v)
			set := weightstest.RandomSet(t, a, 3)
			m, err := Load(set)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(11, 5))
			toks := make([]int32, L)
			for i := range toks {
				toks[i] = int32(r.IntN(a.Vocab))
			}
			plain, err := m.LogProbs(context.Background(), toks, toks, Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			res, err := m.LogProbs(context.Background(), toks, toks, Options{Workers: 2, ProbeQueries: queries, ProbeFar: 16})
			if err != nil {
				t.Fatal(err)
			}
			if want := a.Layers * a.Heads * len(queries); len(res.Probe) != want {
				t.Fatalf("%d probe rows, want %d", len(res.Probe), want)
			}
			for k, r := range res.Probe {
				if r.OutErr > 1e-3 {
					t.Errorf("layer %d head %d query %d: row output off the pass's by %.3g", r.Layer, r.Head, r.Query, r.OutErr)
				}
				if r.FarMass < r.Bound-1e-9 {
					t.Errorf("row %d: far mass %.6g below its bound %.6g", k, r.FarMass, r.Bound)
				}
				var mass float64
				for _, b := range r.Bins {
					mass += b.Mass
				}
				if math.Abs(mass-1) > 1e-9 {
					t.Errorf("row %d: bin masses sum to %.12f", k, mass)
				}
			}
			for i := range plain.LogProbs {
				if plain.LogProbs[i] != res.LogProbs[i] {
					t.Fatalf("position %d: the probe changed the log-prob (%v vs %v)", i, plain.LogProbs[i], res.LogProbs[i])
				}
			}
		})
	}
}

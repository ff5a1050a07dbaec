package evaluate

import (
	"math"
	"math/rand/v2"
	"testing"

	"routebench/model/nativeeval"
	"routebench/modelspec"
)

// routeTestAcc is the route accumulator of a tiny variant (d = 4: two
// pairs; two heads) under DesignPrefixes with T = 16 and lengths 16, 32, 64.
func routeTestAcc(t *testing.T, variant string, layers int) *routeAcc {
	t.Helper()
	a := modelspec.Config{Variant: variant, Profile: "test", Vocab: 7, DModel: 8, Layers: layers, Heads: 2, DHidden: 16, Context: 16}.Arch()
	cfg := NewConfig(variant, "test", 16, []int{1, 2, 4}, 4, 1)
	cfg.Design = DesignPrefixes
	r := newRouteAcc(cfg, a)
	if r == nil {
		t.Fatalf("%s: no route accumulator", variant)
	}
	return r
}

// so2Reference is c(n) by brute force over every window's increments
// (one head and pair): the mean over starts j with j + n < L of
// cos(sum_{t=j+1}^{j+n} a_t).
func so2Reference(inc [][]float64, L, n int) float64 {
	var s float64
	var c int
	for _, win := range inc {
		for j := 0; j+n < L; j++ {
			var ang float64
			for t := j + 1; t <= j+n; t++ {
				ang += win[t]
			}
			s += math.Cos(ang)
			c++
		}
	}
	return s / float64(c)
}

// so2HandRoutes are two windows of 64 hand-built increments [L][H=2][P=2]:
// head 0 pair 0 turns pi/2 per token, pair 1 not at all; head 1 draws x
// from {0.3, 2.1} per token, pair 0 turning by x and pair 1 by -x. ref
// holds head 1's x per window.
func so2HandRoutes() (route [][]nativeeval.LayerRoute, ref [][]float64) {
	const L = 64
	rng := rand.New(rand.NewPCG(4, 2))
	for w := 0; w < 2; w++ {
		inc := make([]float32, L*2*2)
		xs := make([]float64, L)
		for i := 0; i < L; i++ {
			inc[(i*2+0)*2+0] = math.Pi / 2
			x := []float32{0.3, 2.1}[rng.IntN(2)]
			inc[(i*2+1)*2+0], inc[(i*2+1)*2+1] = x, -x
			xs[i] = float64(x)
		}
		route = append(route, []nativeeval.LayerRoute{{Layer: 0, Angles: inc}})
		ref = append(ref, xs)
	}
	return route, ref
}

// so2Errors runs the accumulator on the hand routes and returns the
// largest |c(n) - cos(n a)| of head 0 pair 0 (a = float32(pi/2), the
// increment as stored) together with |c - 1| of pair 1, the largest
// |c(n) - cos(n pi/2)| of pair 0 (0, -1, 0, 1 up to the float32 rounding
// of pi/2, n 4e-8), and the largest |c(n) - brute force| of head 1, over
// every length and grid n.
func so2Errors(t *testing.T, route [][]nativeeval.LayerRoute, ref [][]float64) (r *routeAcc, hand, exact, brute float64) {
	t.Helper()
	r = routeTestAcc(t, "random-qk", 1)
	for w, lr := range route {
		if err := r.add(w, lr); err != nil {
			t.Fatal(err)
		}
	}
	a := float64(float32(math.Pi / 2))
	for k, L := range r.lengths {
		grid, routes, c := r.curves(k)
		for g, n := range grid {
			if routes[g] != int64(2*(L-n)) {
				t.Errorf("L=%d n=%d: %d routes, want %d (every start of two windows)", L, n, routes[g], 2*(L-n))
			}
			hand = math.Max(hand, math.Max(math.Abs(c[0][g]-math.Cos(float64(n)*a)), math.Abs(c[1][g]-1)))
			exact = math.Max(exact, math.Abs(c[0][g]-[]float64{1, 0, -1, 0}[n%4]))
			want := so2Reference(ref, L, n)
			brute = math.Max(brute, math.Max(math.Abs(c[2][g]-want), math.Abs(c[3][g]-want)))
		}
	}
	return r, hand, exact, brute
}

// TestRouteCorrSO2HandTable: SO(2) route correlations of hand-built
// increments (so2HandRoutes) at every length, routes ending inside its
// prefix: cos(n pi/2) = 0, -1, 0, 1, 1 for the still pair, the brute-force
// mean for the random head; the windows and predictions that follow; and
// routes shifted by one token (routeBroken "offset") break the hand table.
func TestRouteCorrSO2HandTable(t *testing.T) {
	route, ref := so2HandRoutes()
	r, hand, exact, brute := so2Errors(t, route, ref)
	if hand > 1e-12 || exact > 1e-5 || brute > 1e-12 {
		t.Errorf("c(n) off by %.3g from the hand table (1e-12), %.3g from 0, -1, 0, 1 (1e-5), %.3g from the brute-force routes (1e-12)", hand, exact, brute)
	}
	m := r.result()
	if m.Kind != routeSO2 || m.Windows != 2 || len(m.Lengths) != 3 || len(m.Heads) != 4 {
		t.Fatalf("kind %s, %d windows, %d lengths, %d heads; want so2, 2, 3, 4", m.Kind, m.Windows, len(m.Lengths), len(m.Heads))
	}
	// At L = 64 the grid is 1, 2, 3, 4, 6, ..., 48, 63: pi/2 has |c| = 1
	// at every even n, so n* = 49 (c(63) = 0); angle 0 never falls.
	var re, im float64
	for _, xs := range ref {
		for _, x := range xs {
			re, im = re+math.Cos(x), im+math.Sin(x)
		}
	}
	rho := math.Hypot(re, im) / float64(2*len(ref[0]))
	wantPred, _ := predictedWindow(rho, mixingThreshold)
	grid, _, _ := r.curves(len(r.lengths) - 1)
	bruteCurve := make([]float64, len(grid))
	for g, n := range grid {
		bruteCurve[g] = so2Reference(ref, 64, n)
	}
	bruteWin, bruteFound := windowOf(bruteCurve, grid)
	if !bruteFound {
		bruteWin = 0
	}
	for _, hw := range m.Heads {
		want := RouteWindow{Layer: 0, Head: hw.Head, Pair: hw.Pair, Window: bruteWin, Predicted: wantPred, Rho: rho}
		if hw.Head == 0 {
			want.Window, want.Predicted, want.Rho = []int{49, 0}[hw.Pair], 0, 1
		}
		if hw.Window != want.Window || hw.Predicted != want.Predicted || math.Abs(hw.Rho-want.Rho) > 1e-9 {
			t.Errorf("head %d pair %d: %+v, want %+v", hw.Head, hw.Pair, hw, want)
		}
	}
	// Split-half noise: the hand pairs agree in both windows; head 1's two
	// pairs differ by the two windows' brute-force curves.
	lr := m.Lengths[len(m.Lengths)-1]
	if len(lr.Noise) != len(lr.Grid) {
		t.Fatalf("%d noise values for %d grid lengths", len(lr.Noise), len(lr.Grid))
	}
	for g, n := range lr.Grid {
		diff := so2Reference(ref[:1], 64, n) - so2Reference(ref[1:], 64, n)
		if want := math.Sqrt(2 * diff * diff / 4 / 4); math.Abs(lr.Noise[g]-want) > 1e-12 {
			t.Errorf("n=%d: noise %.6f, want %.6f", n, lr.Noise[g], want)
		}
	}
	routeBroken = "offset"
	defer func() { routeBroken = "" }()
	if _, hand, _, _ := so2Errors(t, route, ref); hand < 0.5 {
		t.Errorf("routes shifted by one token still give cos(n pi/2) (off by %.3g): the check cannot fail", hand)
	}
}

// TestWindowOf: n* from hand-made curves.
func TestWindowOf(t *testing.T) {
	grid := []int{1, 2, 3, 4, 6, 8}
	for _, c := range []struct {
		curve []float64
		n     int
		found bool
	}{
		{[]float64{0.9, 0.5, 0.2, 0.05, 0.12, 0.01}, 7, true},   // the last n above is 6 (a rebound counts)
		{[]float64{0.9, -0.5, -0.1, 0.05, 0.0, 0.01}, 4, true},  // |c|: -0.1 is at the threshold
		{[]float64{0.09, 0, 0, 0, 0, 0}, 1, true},               // mixed at the first step
		{[]float64{0.9, 0.5, 0.2, 0.05, 0.12, -0.11}, 0, false}, // still correlated at the longest route
	} {
		n, found := windowOf(c.curve, grid)
		if n != c.n || found != c.found {
			t.Errorf("windowOf(%v) = %d, %v; want %d, %v", c.curve, n, found, c.n, c.found)
		}
	}
	s := summarizeWindows([]int{3, 5, 9, 0}, []bool{true, true, true, false})
	if s.Median != 7 || s.Max != 9 || s.Found != 0.75 || s.Count != 4 {
		t.Errorf("summary %+v, want median 7 (3 5 9 inf), max 9, found 0.75, count 4", s)
	}
	if s := summarizeWindows([]int{3, 0, 0}, []bool{true, false, false}); s.Median != -1 {
		t.Errorf("median %v with most windows not found, want -1", s.Median)
	}
}

// TestPredictedWindows: the SO(2) rule against rho^n directly, and the
// PaTH trace rule against a scan of tr(E^n)/d with negative eigenvalues.
func TestPredictedWindows(t *testing.T) {
	for _, rho := range []float64{0.05, 0.5, 0.9, 0.999} {
		n, ok := predictedWindow(rho, 0.1)
		if !ok || math.Pow(rho, float64(n)) >= 0.1 || (n > 1 && math.Pow(rho, float64(n-1)) < 0.1) {
			t.Errorf("rho %.3f: predicted %d, not the first n with rho^n < 0.1", rho, n)
		}
	}
	if _, ok := predictedWindow(1, 0.1); ok {
		t.Errorf("rho = 1 predicts a window")
	}
	for _, ev := range [][]float64{{0.99, 0.5, 0.1, 0}, {0.95, -0.97, 0.2, 0.9}, {-0.9, -0.8, 0.3, 0.1}} {
		got, ok := traceWindow(ev, 0.1)
		last := 0
		for n := 1; n < 10000; n++ {
			if math.Abs(traceOfPower(ev, n)) >= 0.1 {
				last = n
			}
		}
		if !ok || got != last+1 {
			t.Errorf("eigenvalues %v: predicted %d (%v), scan %d", ev, got, ok, last+1)
		}
	}
	if _, ok := traceWindow([]float64{1, 0.5}, 0.1); ok {
		t.Errorf("an eigenvalue 1 with weight 1/2 predicts a window")
	}
}

// householder64 is I - beta w w^T (d x d, float64).
func householder64(w []float64, beta float64) []float64 {
	d := len(w)
	m := make([]float64, d*d)
	for a := 0; a < d; a++ {
		for c := 0; c < d; c++ {
			m[a*d+c] = -beta * w[a] * w[c]
		}
		m[a*d+a]++
	}
	return m
}

// TestRouteCorrPaTHDense: PaTH's route traces against dense float64
// products of Householder matrices over the same routes (levels shrunk to
// 4, 16 and 64 so that a window of 64 holds many routes), and the
// predicted curve tr(E[H]^n)/d against dense powers of the mean step;
// routes shifted by one token (routeBroken "offset") disagree.
func TestRouteCorrPaTHDense(t *testing.T) {
	defer func(l []int) { pathLevels = l }(pathLevels)
	pathLevels = []int{4, 16, 64}
	const L, H, d = 64, 2, 4
	rng := rand.New(rand.NewPCG(9, 1))
	type step struct {
		w    [][][]float64 // [H][L][d]
		beta [][]float64
	}
	var route [][]nativeeval.LayerRoute
	var steps []step
	for win := 0; win < 2; win++ {
		var layers []nativeeval.LayerRoute
		for l := 0; l < 2; l++ {
			lr := nativeeval.LayerRoute{Layer: l, W: make([]float32, H*L*d), Beta: make([]float32, H*L)}
			st := step{w: make([][][]float64, H), beta: make([][]float64, H)}
			for h := 0; h < H; h++ {
				for i := 0; i < L; i++ {
					v := make([]float64, d)
					var n2 float64
					for c := range v {
						v[c] = float64(float32(rng.NormFloat64()))
						n2 += v[c] * v[c]
					}
					for c := range v {
						v[c] = float64(float32(v[c] / math.Sqrt(n2)))
						lr.W[(h*L+i)*d+c] = float32(v[c])
					}
					b := float64(float32(2 * rng.Float64()))
					lr.Beta[h*L+i] = float32(b)
					st.w[h] = append(st.w[h], v)
					st.beta[h] = append(st.beta[h], b)
				}
			}
			layers = append(layers, lr)
			steps = append(steps, st) // steps[win*2+l]
		}
		route = append(route, layers)
	}
	run := func() (*routeAcc, float64) {
		r := routeTestAcc(t, "path", 2)
		for w, lr := range route {
			if err := r.add(w, lr); err != nil {
				t.Fatal(err)
			}
		}
		var worst float64
		for k, Lk := range r.lengths {
			grid, routes, c := r.curves(k)
			for u := 0; u < 2*H; u++ {
				l, h := u/H, u%H
				for g, n := range grid {
					var sum float64
					var cnt int64
					for win := 0; win < 2; win++ {
						st := steps[win*2+l]
						for _, N := range pathLevels {
							for j := 0; j < L-1; j += N {
								if n > N || j+n >= Lk {
									continue
								}
								P := householder64(st.w[h][j+1], st.beta[h][j+1])
								for tt := j + 2; tt <= j+n; tt++ {
									P = matMul(householder64(st.w[h][tt], st.beta[h][tt]), P, d)
								}
								var tr float64
								for a := 0; a < d; a++ {
									tr += P[a*d+a]
								}
								sum += tr / d
								cnt++
							}
						}
					}
					if routes[g] != cnt {
						t.Fatalf("L=%d n=%d: %d routes, the dense reference %d", Lk, n, routes[g], cnt)
					}
					worst = math.Max(worst, math.Abs(c[u][g]-sum/float64(cnt)))
				}
			}
		}
		return r, worst
	}
	r, worst := run()
	if worst > 1e-12 {
		t.Errorf("route traces off the dense products by %.3g (> 1e-12)", worst)
	}
	// The predicted curve: tr(E^n)/d from dense powers of E = I - mean beta w w^T.
	m := r.result()
	lr := m.Lengths[len(m.Lengths)-1]
	var worstPred float64
	for g, n := range lr.Grid {
		var mean float64
		for u := 0; u < 2*H; u++ {
			l, h := u/H, u%H
			E := make([]float64, d*d)
			for win := 0; win < 2; win++ {
				st := steps[win*2+l]
				for i := 0; i < L; i++ {
					hm := householder64(st.w[h][i], st.beta[h][i])
					for k := range E {
						E[k] += hm[k] / (2 * L)
					}
				}
			}
			P := identity(d)
			for k := 0; k < n; k++ {
				P = matMul(P, E, d)
			}
			var tr float64
			for a := 0; a < d; a++ {
				tr += P[a*d+a]
			}
			mean += tr / d / float64(2*H)
		}
		worstPred = math.Max(worstPred, math.Abs(lr.Predicted[g]-mean))
	}
	if worstPred > 1e-9 {
		t.Errorf("predicted curve off tr(E^n)/d by %.3g (> 1e-9)", worstPred)
	}
	routeBroken = "offset"
	defer func() { routeBroken = "" }()
	if _, worst := run(); worst < 1e-3 {
		t.Errorf("routes shifted by one step still match the dense products (%.3g): the check cannot fail", worst)
	}
}

// TestRouteCorrRoPE: RoPE's curve is the mean over pairs of cos(n omega_p),
// with no routes, and no pair has a gap.
func TestRouteCorrRoPE(t *testing.T) {
	r := routeTestAcc(t, "rope", 2)
	if r.wants(0) {
		t.Errorf("RoPE asks for a route trace")
	}
	m := r.result()
	om := modelspec.RopeFrequencies(4, modelspec.Config{Variant: "rope", Profile: "test", Vocab: 7, DModel: 8, Layers: 2, Heads: 2, DHidden: 16, Context: 16}.Arch().RopeBase)
	for _, lr := range m.Lengths {
		for g, n := range lr.Grid {
			want := (math.Cos(float64(n)*om[0]) + math.Cos(float64(n)*om[1])) / 2
			if math.Abs(lr.Curve[g]-want) > 1e-12 || lr.Routes != nil {
				t.Errorf("L=%d n=%d: c %.6f (routes %v), want %.6f and none", lr.L, n, lr.Curve[g], lr.Routes, want)
			}
		}
		if lr.PredictedWindow.Found != 0 {
			t.Errorf("L=%d: RoPE predicted windows found for %.2f of the pairs, want none", lr.L, lr.PredictedWindow.Found)
		}
	}
}

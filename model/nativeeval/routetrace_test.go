package nativeeval

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"routebench/modelspec"
	"routebench/modelspec/weights/weightstest"
)

// TestRouteTrace checks Options.RouteTrace on every variant with a route:
//   - token tables: the increments, summed by the forward pass's own rule,
//     give back the cos/sin table the attention reads (accumulatedCosSin),
//     and a sum shifted by one token does not (the check can fail);
//   - learned-proj-qkv: layer 0's increments against the float64
//     projection of the normed embeddings (layer 1's input needs the whole
//     first block: it is checked to differ from layer 0's, i.e. per layer);
//   - PaTH: w and beta against the float64 reference steps.
//
// Variants without a route (nope, rope, alibi) return none.
func TestRouteTrace(t *testing.T) {
	const L = 70
	r := rand.New(rand.NewPCG(5, 6))
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			a := variantArch(v)
			set := weightstest.RandomSet(t, a, 17)
			m, err := Load(set)
			if err != nil {
				t.Fatal(err)
			}
			toks := make([]int32, L)
			for i := range toks {
				toks[i] = int32(r.IntN(a.Vocab))
			}
			res, err := m.LogProbs(context.Background(), toks, nil, Options{RouteTrace: true, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			H, d, P := a.Heads, a.DHead(), a.DHead()/2
			switch {
			case a.Householder:
				checkPathTrace(t, res.Route, &weightsView{arch: a, set: set}, toks)
			case a.Rotation != modelspec.RotationAccumulated:
				if len(res.Route) != 0 {
					t.Fatalf("%d route layers for rotation %q, want none", len(res.Route), a.Rotation)
				}
			case a.AngleProj:
				if len(res.Route) != a.Layers {
					t.Fatalf("%d route layers, want %d", len(res.Route), a.Layers)
				}
				view := &weightsView{arch: a, set: set}
				wp, emb, g := view.t(blockName(0)+modelspec.AngleProjName), view.t("embed"), view.t(blockName(0)+"norm1")
				D := a.DModel
				var worst float64
				for i, x := range toks {
					row := emb[int(x)*D : (int(x)+1)*D]
					var ss float64
					for _, u := range row {
						ss += float64(u) * float64(u)
					}
					inv := 1 / math.Sqrt(ss/float64(D)+a.NormEps)
					for k := 0; k < H*P; k++ {
						var th float64
						for c, u := range row {
							th += float64(u) * inv * float64(g[c]) * float64(wp[c*H*P+k])
						}
						worst = math.Max(worst, math.Abs(float64(res.Route[0].Angles[i*H*P+k])-th))
					}
				}
				if worst > 1e-5 {
					t.Errorf("layer 0 angle increments differ from the float64 projection by %.3g (> 1e-5)", worst)
				}
				if &res.Route[0].Angles[0] == &res.Route[1].Angles[0] || res.Route[0].Angles[0] == res.Route[1].Angles[0] {
					t.Errorf("learned-proj-qkv: layer 1 returned layer 0's increments (the projection is per layer)")
				}
			default:
				if len(res.Route) != a.Layers {
					t.Fatalf("%d route layers, want %d", len(res.Route), a.Layers)
				}
				want := accumulatedCosSin(toks, m.angles, H, d, 1)
				for _, lr := range res.Route {
					if e := cosSinError(lr.Angles, want, L, H, d, 0); e > 0 {
						t.Errorf("layer %d: the increments' sums differ from the forward's cos/sin table by %.3g", lr.Layer, e)
					}
				}
				if e := cosSinError(res.Route[0].Angles, want, L, H, d, 1); e < 1e-3 {
					t.Errorf("sums shifted by one token still match the table (%.3g): the check cannot fail", e)
				}
			}
		})
	}
}

// cosSinError sums the increments inc ([L][H][P]) by AccumulateAngles,
// starting shift tokens late, and returns the largest |cos, sin - table|.
func cosSinError(inc, table []float32, L, H, d, shift int) float64 {
	P := d / 2
	var worst float64
	for h := 0; h < H; h++ {
		acc := make([]float64, P)
		for i := 0; i < L; i++ {
			if i >= shift {
				modelspec.AccumulateAngles(acc, inc[((i-shift)*H+h)*P:((i-shift)*H+h+1)*P])
			}
			for p, x := range acc {
				c, s := float32(math.Cos(x)), float32(math.Sin(x))
				got := table[(i*H+h)*d+2*p:]
				worst = math.Max(worst, math.Max(math.Abs(float64(c-got[0])), math.Abs(float64(s-got[1]))))
			}
		}
	}
	return worst
}

// checkPathTrace compares PaTH's traced steps with the reference's.
func checkPathTrace(t *testing.T, route []LayerRoute, view *weightsView, toks []int32) {
	t.Helper()
	a := view.arch
	H, d, L := a.Heads, a.DHead(), len(toks)
	if len(route) != a.Layers {
		t.Fatalf("%d route layers, want %d", len(route), a.Layers)
	}
	refForwardPath(view, toks, func(n int, rp *refPath) {
		lr := route[n]
		if lr.Layer != n || len(lr.W) != H*L*d || len(lr.Beta) != H*L {
			t.Fatalf("route %d: layer %d, %d directions, %d strengths; want layer %d, %d and %d", n, lr.Layer, len(lr.W), len(lr.Beta), n, H*L*d, H*L)
		}
		var worst float64
		for h := 0; h < H; h++ {
			for i := 0; i < L; i++ {
				worst = math.Max(worst, math.Abs(float64(lr.Beta[h*L+i])-rp.beta[i][h]))
				for c := 0; c < d; c++ {
					worst = math.Max(worst, math.Abs(float64(lr.W[(h*L+i)*d+c])-rp.w[i][h][c]))
				}
			}
		}
		if worst > 1e-4 {
			t.Errorf("layer %d: traced steps differ from the float64 reference by %.3g (> 1e-4)", n, worst)
		}
	})
}

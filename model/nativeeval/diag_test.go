package nativeeval

import (
	"math"
	"math/rand/v2"
	"testing"

	"routebench/internal/kerneltest"
)

// diagError is the largest disagreement of the streamed diagnostics with
// the float64 weights alpha ([H][L][L], causal), in units of the
// tolerances (entropy 1e-4 nats, far mass 2e-5): below 1 means they agree.
func diagError(diag *layerDiag, alpha [][][]float64, dists []int) float64 {
	var worst float64
	for h, hd := range diag.heads {
		for i := range alpha[h] {
			var ent float64
			far := make([]float64, len(dists))
			for j := 0; j <= i; j++ {
				a := alpha[h][i][j]
				if a > 0 {
					ent -= a * math.Log(a)
				}
				for k, D := range dists {
					if i-j > D {
						far[k] += a
					}
				}
			}
			worst = math.Max(worst, math.Abs(float64(hd.ent[i])-ent)/1e-4)
			for k := range dists {
				worst = math.Max(worst, math.Abs(float64(hd.far[k][i])-far[k])/2e-5)
			}
		}
	}
	return worst
}

// pathProblem is a random PaTH layer on L tokens: head buffers, steps with
// betas in (0, 2), and the float64 weights alpha_ij from carrying each
// query back through H_i ... H_{j+1} one step at a time.
func pathProblem(L, H, d int, seed uint64) (*attnShape, *headBufs, *pathSteps, [][][]float64) {
	r := rand.New(rand.NewPCG(seed, 21))
	D := H * d
	qkv := randSlice(r, L*3*D, 1)
	s := &attnShape{L: L, H: H, d: d}
	bufs := newHeadBufs(s)
	for row0 := 0; row0 < L; row0 += blockK {
		x := qkv[row0*3*D:]
		bufs.scatterRows(s, row0, min(blockK, L-row0), x, x[D:], x[2*D:], 3*D)
	}
	st := randomSteps(H*L, d, 0, seed) // [H][L][d]
	for i := range st.beta {
		st.beta[i] = float32(2 * r.Float64())
	}
	alpha := make([][][]float64, H)
	for h := range alpha {
		alpha[h] = make([][]float64, L)
		for i := range alpha[h] {
			u := make([]float64, d)
			for c := range u {
				u[c] = float64(qkv[i*3*D+h*d+c]) / math.Sqrt(float64(d))
			}
			row, mx := make([]float64, i+1), math.Inf(-1)
			for j := i; j >= 0; j-- {
				var sc float64
				for c := range u {
					sc += u[c] * float64(qkv[j*3*D+D+h*d+c])
				}
				row[j], mx = sc, math.Max(mx, sc)
				wj, a := st.w[(h*L+j)*d:(h*L+j)*d+d], 0.0 // u <- H_j u
				for c := range u {
					a += u[c] * float64(wj[c])
				}
				for c := range u {
					u[c] -= float64(st.beta[h*L+j]) * a * float64(wj[c])
				}
			}
			var z float64
			for j := range row {
				row[j] = math.Exp(row[j] - mx)
				z += row[j]
			}
			for j := range row {
				row[j] /= z
			}
			alpha[h][i] = row
		}
	}
	return s, bufs, st, alpha
}

// TestDiagnosticsOnePass checks the one-pass entropy and far mass of plain
// and PaTH attention against float64 weights at lengths that cross several
// key blocks (so a later block's larger max rescales the earlier sums),
// and that leaving out the rescale fails the check.
func TestDiagnosticsOnePass(t *testing.T) {
	dists := []int{0, 3, 64, 100, 1000}
	plain := func() float64 {
		r := rand.New(rand.NewPCG(5, 77))
		s, qkv, in := attnProblem(r, attnCases[1], 300, 2, 32) // rope
		_, alpha := refAttention(in)
		_, diag := runKernel(s, qkv, 2, dists)
		return diagError(diag, alpha, dists)
	}
	path := func() float64 {
		s, bufs, st, alpha := pathProblem(300, 2, 32, 3)
		diag := newLayerDiag(s.H, s.L, dists)
		pathAttend(s, bufs, st, newPathBlocks(s, bufs, st, 2, nil), make([]float32, s.L*s.H*s.d), 2, diag)
		return diagError(diag, alpha, dists)
	}
	for _, c := range []struct {
		name string
		f    func() float64
	}{{"plain", plain}, {"path", path}} {
		t.Run(c.name, func(t *testing.T) {
			kerneltest.Each(t, func(t *testing.T) {
				e0 := c.f()
				t.Logf("one pass: %.3g tolerances", e0)
				if e := e0; e > 1 {
					t.Errorf("diagnostics differ from the float64 weights by %.3g tolerances", e)
				}
				diagBroken = "rescale"
				defer func() { diagBroken = "" }()
				e := c.f()
				t.Logf("without the rescale: %.3g tolerances", e)
				if e <= 1 {
					t.Errorf("without the rescale the diagnostics still agree (%.3g tolerances): the check cannot fail", e)
				}
			})
		})
	}
}

package nativetrain

import (
	"fmt"
	"math"

	"routebench/model/native"
	"routebench/modelspec"
)

// layerTape is what one block's backward pass reads from its forward pass.
// Row-major [N][D] unless said otherwise (N = rows x T positions).
type layerTape struct {
	x          []float32 // block input (residual stream)
	n1, a1     []float32 // RMS-normalised input, and times the gain
	inv1       []float32 // [N] 1/rms
	q, k, v    []float32 // rotated as attention sees them, head-major [rows][H][T][d]
	p          []float32 // attention probabilities [rows][H][T][T]
	o          []float32 // attention output, head-major, in the rotated frame
	ou         []float32 // [N][D] output projection's input (o un-rotated under value transport)
	xm         []float32 // residual stream after attention
	n2, a2     []float32
	inv2       []float32
	u, th, gel []float32 // [N][F] MLP pre-activation, tanh of the GELU's inner term, GELU output
}

// tape is a whole forward pass.
type tape struct {
	rows, N          int
	tokens, targets  []int32
	cos, sin         []float32 // [N][H][d] per pair, duplicated on both dims; nil: no rotation
	layers           []layerTape
	xf, nf, af, invf []float32
	probs            []float32 // [N][V] softmax of the logits
	loss             float32
}

// rowBlock is the number of positions one elementwise task covers.
const rowBlock = 64

func (t *Trainer) forRows(N int, body func(i0, i1 int)) {
	native.ParallelFor((N+rowBlock-1)/rowBlock, t.workers, func(b int) {
		body(b*rowBlock, min(N, (b+1)*rowBlock))
	})
}

// ParallelTensors runs body(i) for i < n on up to workers goroutines.
func ParallelTensors(n, workers int, body func(i int)) { native.ParallelFor(n, workers, body) }

// forward runs the model on rows windows; keep says whether the
// activations are kept for backward (and the logits' softmax).
func (t *Trainer) forward(params [][]float32, tokens, targets []int32, rows int, keep bool) (*tape, error) {
	c := t.c
	T, D, F, V := c.Context, c.DModel, c.DHidden, c.Vocab
	N := rows * T
	f := &tape{rows: rows, N: N, tokens: tokens, targets: targets}
	if t.v.Rotation != modelspec.RotationNone {
		table := t.table
		if t.v.Learned {
			table = t.param(params, "angles")
		}
		var err error
		if f.cos, f.sin, err = modelspec.RotationCosSin(c, table, tokens, rows, T); err != nil {
			return nil, fmt.Errorf("nativetrain: %s rotation: %w", c.Variant, err)
		}
	}
	emb := t.param(params, "embed")
	h := make([]float32, N*D)
	for i, x := range tokens {
		copy(h[i*D:(i+1)*D], emb[int(x)*D:(int(x)+1)*D])
	}
	f.layers = make([]layerTape, c.Layers)
	for l := range f.layers {
		lt := &f.layers[l]
		lt.x = h
		lt.n1, lt.a1, lt.inv1 = t.rmsNorm(h, t.param(params, blockName(l, "norm1")), N)
		att := t.attentionForward(params, l, lt, f, rows)
		xm := make([]float32, N*D)
		for i := range xm {
			xm[i] = h[i] + att[i]
		}
		lt.xm = xm
		lt.n2, lt.a2, lt.inv2 = t.rmsNorm(xm, t.param(params, blockName(l, "norm2")), N)
		lt.u = make([]float32, N*F)
		native.MatMul(lt.u, lt.a2, t.param(params, blockName(l, "w1")), N, D, F, false, false, false, t.workers)
		lt.th, lt.gel = make([]float32, N*F), make([]float32, N*F)
		b1 := t.param(params, blockName(l, "b1"))
		t.forRows(N, func(i0, i1 int) {
			for i := i0; i < i1; i++ {
				u, th, g := lt.u[i*F:(i+1)*F], lt.th[i*F:(i+1)*F], lt.gel[i*F:(i+1)*F]
				for j := range u {
					u[j] += b1[j]
					th[j], g[j] = geluFwd(u[j])
				}
			}
		})
		out := make([]float32, N*D)
		native.MatMul(out, lt.gel, t.param(params, blockName(l, "w2")), N, F, D, false, false, false, t.workers)
		b2 := t.param(params, blockName(l, "b2"))
		next := make([]float32, N*D)
		for i := range next {
			next[i] = xm[i] + out[i] + b2[i%D]
		}
		h = next
		if !keep {
			f.layers[l] = layerTape{}
		}
	}
	f.xf = h
	f.nf, f.af, f.invf = t.rmsNorm(h, t.param(params, "normf"), N)
	logits := make([]float32, N*V)
	native.MatMul(logits, f.af, t.param(params, "unembed"), N, D, V, false, false, false, t.workers)
	// Per-row loss terms in float64, summed in row order (deterministic).
	rowLoss := make([]float64, N)
	t.forRows(N, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			z := logits[i*V : (i+1)*V]
			mx := z[0]
			for _, x := range z {
				mx = max(mx, x)
			}
			zt := float64(z[targets[i]] - mx)
			var s float64
			for j, x := range z {
				e := math.Exp(float64(x - mx))
				z[j] = float32(e)
				s += e
			}
			rowLoss[i] = math.Log(s) - zt
			inv := 1 / s
			for j := range z {
				z[j] = float32(float64(z[j]) * inv)
			}
		}
	})
	var sum float64
	for _, x := range rowLoss {
		sum += x
	}
	f.loss = float32(sum / float64(N))
	if keep {
		f.probs = logits
	}
	return f, nil
}

// rmsNorm returns n = x / sqrt(mean(x^2) + eps) per row, a = n * gain and
// the per-row 1/rms.
func (t *Trainer) rmsNorm(x, gain []float32, N int) (n, a, inv []float32) {
	D := len(gain)
	n, a, inv = make([]float32, N*D), make([]float32, N*D), make([]float32, N)
	t.forRows(N, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			row := x[i*D : (i+1)*D]
			var ss float32
			for _, v := range row {
				ss += v * v
			}
			r := float32(1 / math.Sqrt(float64(ss/float32(D))+modelspec.NormEps))
			inv[i] = r
			nr, ar := n[i*D:(i+1)*D], a[i*D:(i+1)*D]
			for j, v := range row {
				nr[j] = v * r
				ar[j] = nr[j] * gain[j]
			}
		}
	})
	return n, a, inv
}

const geluK = 0.7978845608028654 // sqrt(2/pi)

// geluFwd returns tanh(k (u + 0.044715 u^3)) and the GELU 0.5 u (1 + tanh).
func geluFwd(u float32) (th, g float32) {
	th = float32(math.Tanh(float64(geluK * (u + 0.044715*u*u*u))))
	return th, 0.5 * u * (1 + th)
}

// geluGrad is d GELU / du from u and the saved tanh.
func geluGrad(u, th float32) float32 {
	return 0.5*(1+th) + 0.5*u*(1-th*th)*geluK*(1+3*0.044715*u*u)
}

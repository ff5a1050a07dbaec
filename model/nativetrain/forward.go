package nativetrain

import (
	"fmt"
	"math"

	"routebench/model/native"
	"routebench/modelspec"
)

// layerTape is what one block's backward pass reads from its forward pass.
// Row-major [N][D] unless said otherwise (N = rows x T positions; D's
// columns are H heads of d, so one head is a strided view).
type layerTape struct {
	n1, a1     []float32 // RMS-normalised input, and times the gain
	inv1       []float32 // [N] 1/rms
	q, k, v    []float32 // rotated as attention sees them
	p          []float32 // attention probabilities [rows][H][T][T]
	o          []float32 // attention output in the rotated frame
	ou         []float32 // output projection's input (o un-rotated under value transport, else o)
	n2, a2     []float32
	inv2       []float32
	u, th, gel []float32 // [N][F] MLP pre-activation, tanh of the GELU's inner term, GELU output
	path       *pathTape // PaTH's steps and transport (householder_steps.go); nil for the other variants
	cos, sin   []float32 // learned-proj-qkv: this block's rotation (angleproj.go); nil: the tape's
}

// rotation is the cos and sin block lt rotates by: its own projected
// angles, or the tape's (shared by every block; nil: no rotation).
func (lt *layerTape) rotation(f *tape) (cos, sin []float32) {
	if lt.cos != nil {
		return lt.cos, lt.sin
	}
	return f.cos, f.sin
}

// tape is a whole forward pass.
type tape struct {
	rows, N         int
	tokens, targets []int32
	cos, sin        []float32 // [N][H][d] per pair, duplicated on both dims; nil: no rotation
	layers          []layerTape
	nf, af, invf    []float32
	dlogits         []float32 // [N][V] d loss / d logits = (softmax - onehot) / N
	loss            float32
}

// rowBlock is the number of positions one elementwise task covers.
const rowBlock = 64

// forRows runs body over fixed blocks of positions: each output element is
// written by one block, so the result does not depend on the workers.
func (t *Trainer) forRows(N int, body func(i0, i1 int)) {
	native.ParallelFor((N+rowBlock-1)/rowBlock, t.workers, func(b int) {
		body(b*rowBlock, min(N, (b+1)*rowBlock))
	})
}

// colBlock is the number of columns one column-reduction task covers: 64
// (256 bytes of each row). At 16 (one vector) each task read one cache line
// of every row and the tasks together read each row four times over: the
// conv taps' gradient ran 14x slower in a PaTH step than alone (2.7 ms a
// layer at T 512 x batch 8, against 0.19 ms).
const colBlock = 64

// forCols runs body over fixed blocks of n columns, for reductions over
// rows (bias and gain gradients): each task sums its columns over all rows
// in row order, so neither the order nor the result depends on the workers.
func (t *Trainer) forCols(n int, body func(j0, j1 int)) {
	native.ParallelFor((n+colBlock-1)/colBlock, t.workers, func(b int) {
		body(b*colBlock, min(n, (b+1)*colBlock))
	})
}

// ParallelTensors runs body(i) for i < n on up to workers goroutines.
func ParallelTensors(n, workers int, body func(i int)) { native.ParallelFor(n, workers, body) }

// forward runs the model on rows windows; keep says whether the
// activations are kept for backward (and the logits' gradient).
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
		if f.cos, f.sin, err = t.rotationCosSin(table, tokens, rows); err != nil {
			return nil, fmt.Errorf("nativetrain: %s rotation: %w", c.Variant, err)
		}
	}
	emb := t.param(params, "embed")
	h := t.ar.raw(N * D)
	t.forRows(N, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			x := int(tokens[i])
			copy(h[i*D:(i+1)*D], emb[x*D:(x+1)*D])
		}
	})
	f.layers = make([]layerTape, c.Layers)
	for l := range f.layers {
		lt := &f.layers[l]
		lt.n1, lt.a1, lt.inv1 = t.rmsNorm(h, t.param(params, blockName(l, "norm1")), N)
		if t.v.AngleProj {
			t.projectedRotation(params, l, lt, rows) // angleproj.go
		}
		xm := t.ar.raw(N * D)
		copy(xm, h)
		t.attentionForward(params, l, lt, f, rows, xm) // xm = h + attn(a1)
		lt.n2, lt.a2, lt.inv2 = t.rmsNorm(xm, t.param(params, blockName(l, "norm2")), N)
		lt.u = t.ar.raw(N * F)
		native.MatMul(lt.u, lt.a2, t.param(params, blockName(l, "w1")), N, D, F, false, false, false, t.workers)
		lt.th, lt.gel = t.ar.raw(N*F), t.ar.raw(N*F)
		b1, b2 := t.param(params, blockName(l, "b1")), t.param(params, blockName(l, "b2"))
		next := t.ar.raw(N * D)
		t.forRows(N, func(i0, i1 int) {
			for i := i0; i < i1; i++ {
				native.GELUTanh(lt.u[i*F:(i+1)*F], b1, lt.th[i*F:(i+1)*F], lt.gel[i*F:(i+1)*F])
				nr, xr := next[i*D:(i+1)*D], xm[i*D:(i+1)*D]
				for j := range nr {
					nr[j] = xr[j] + b2[j]
				}
			}
		})
		// next = xm + b2 + gelu(u) w2
		native.MatMul(next, lt.gel, t.param(params, blockName(l, "w2")), N, F, D, false, false, true, t.workers)
		h = next
		if !keep {
			f.layers[l] = layerTape{}
		}
	}
	f.nf, f.af, f.invf = t.rmsNorm(h, t.param(params, "normf"), N)
	logits := t.ar.raw(N * V)
	native.MatMul(logits, f.af, t.param(params, "unembed"), N, D, V, false, false, false, t.workers)
	// Per-row loss terms in float64, summed in row order (deterministic).
	rowLoss := make([]float64, N)
	invN := float32(1 / float64(N))
	t.forRows(N, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			z := logits[i*V : (i+1)*V]
			mx := z[0]
			for _, x := range z {
				mx = max(mx, x)
			}
			zt := float64(z[targets[i]] - mx)
			s := native.ExpShift(z, mx)
			rowLoss[i] = math.Log(float64(s)) - zt
			if !keep {
				continue
			}
			inv := 1 / s
			for j := range z {
				z[j] *= inv
			}
			z[targets[i]] -= 1
			for j := range z {
				z[j] *= invN
			}
		}
	})
	var sum float64
	for _, x := range rowLoss {
		sum += x
	}
	f.loss = float32(sum / float64(N))
	if keep {
		f.dlogits = logits
	}
	return f, nil
}

// rotationCosSin is modelspec.RotationCosSin of the batch, one window per
// task (a window's angles depend on its own tokens only, so the result does
// not depend on the workers): a serial pass was ~10% of a RoPE step's wall
// time at T = 512. RoPE's angles depend only on the position, so they are
// computed once and kept (t.rope) for every later batch of the same rows.
func (t *Trainer) rotationCosSin(table []float32, tokens []int32, rows int) (cos, sin []float32, err error) {
	c := t.c
	T, n := c.Context, c.Context*c.DModel // a window's values: T positions x H heads x d
	if t.v.AngleProj {
		return nil, nil, nil // each block projects its own (angleproj.go)
	}
	rope := t.v.Rotation == modelspec.RotationRoPE
	if rope && t.rope.rows == rows {
		return t.rope.cos, t.rope.sin, nil
	}
	if rope {
		cos, sin = make([]float32, rows*n), make([]float32, rows*n)
	} else {
		cos, sin = t.ar.raw(rows*n), t.ar.raw(rows*n)
	}
	errs := make([]error, rows)
	native.ParallelFor(rows, t.workers, func(b int) {
		if err := modelspec.RotationCosSinInto(c, table, tokens[b*T:(b+1)*T], 1, T, cos[b*n:(b+1)*n], sin[b*n:(b+1)*n]); err != nil {
			errs[b] = fmt.Errorf("window %d: %w", b, err)
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	if rope {
		t.rope.rows, t.rope.cos, t.rope.sin = rows, cos, sin
	}
	return cos, sin, nil
}

// rmsNorm returns n = x / sqrt(mean(x^2) + eps) per row, a = n * gain and
// the per-row 1/rms.
func (t *Trainer) rmsNorm(x, gain []float32, N int) (n, a, inv []float32) {
	D := len(gain)
	n, a, inv = t.ar.raw(N*D), t.ar.raw(N*D), t.ar.raw(N)
	t.forRows(N, func(i0, i1 int) {
		var ss [4]float32
		for i := i0; i < i1; i += 4 {
			m := min(4, i1-i)
			rowDots(x[i*D:(i+m)*D], x[i*D:(i+m)*D], D, ss[:m])
			for k := i; k < i+m; k++ {
				r := float32(1 / math.Sqrt(float64(ss[k-i]/float32(D))+modelspec.NormEps))
				inv[k] = r
				native.NormScale(n[k*D:(k+1)*D], a[k*D:(k+1)*D], x[k*D:(k+1)*D], gain, r)
			}
		}
	})
	return n, a, inv
}

// rowDots sets out[r] = x_r . y_r for len(out) <= 4 consecutive rows of
// D, each sum in index order in float32; four rows' sums run side by side,
// since a lone sum waits on its previous add at every element.
func rowDots(x, y []float32, D int, out []float32) {
	if len(out) == 4 {
		x0, x1, x2, x3 := x[:D], x[D:2*D], x[2*D:3*D], x[3*D:4*D]
		y0, y1, y2, y3 := y[:D], y[D:2*D], y[2*D:3*D], y[3*D:4*D]
		var s0, s1, s2, s3 float32
		for j := range x0 {
			s0 += x0[j] * y0[j]
			s1 += x1[j] * y1[j]
			s2 += x2[j] * y2[j]
			s3 += x3[j] * y3[j]
		}
		out[0], out[1], out[2], out[3] = s0, s1, s2, s3
		return
	}
	for r := range out {
		var s float32
		yr := y[r*D : (r+1)*D]
		for j, v := range x[r*D : (r+1)*D] {
			s += v * yr[j]
		}
		out[r] = s
	}
}

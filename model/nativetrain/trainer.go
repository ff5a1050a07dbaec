package nativetrain

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"routebench/modelspec"
)

// Param is one trained tensor, in the caller's order (package model's
// paramSpecs: sorted by name).
type Param struct {
	Name  string
	Shape []int
	Decay bool // AdamW weight decay applies
	// LRScale multiplies the learning rate (and so the decoupled decay) of
	// this tensor: modelspec's Variant.LRScale; 0 means 1.
	LRScale float64
}

// Trainer holds one run's parameters and Adam moments on the host.
type Trainer struct {
	c       modelspec.Config
	v       modelspec.Variant
	params  []Param
	idx     map[string]int
	table   []float32 // fixed angle table of random-* variants (nil otherwise)
	workers int
	ar      arena     // a step's buffers, reused by the next
	scratch sync.Pool // *[]float32: per-task buffers of the PaTH transport (householder_attention.go)
	pc      *pieces   // the backward pieces a mutation check can break (mutation.go)
	rope    struct {  // RoPE's rotation of the last batch shape (forward.go: rotationCosSin); read-only
		rows     int
		cos, sin []float32
	}

	p, m, vv [][]float32
}

// New prepares a trainer for c. params must be the tensors ARCHITECTURE.md
// names for c, with their shapes; table is the fixed angle table of a
// random-* variant (nil for the others). workers <= 0 means GOMAXPROCS;
// the result does not depend on it.
func New(c modelspec.Config, params []Param, table []float32, workers int) (*Trainer, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("nativetrain: %w", err)
	}
	v, _ := modelspec.LookupVariant(c.Variant)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	t := &Trainer{c: c, v: v, params: params, idx: map[string]int{}, table: table, workers: workers, pc: newPieces()}
	for i, p := range params {
		t.idx[p.Name] = i
	}
	want := paramShapes(c, v)
	if len(params) != len(want) {
		return nil, fmt.Errorf("nativetrain: %s: got %d parameter tensors, want %d (the list of ARCHITECTURE.md)", c.Variant, len(params), len(want))
	}
	for name, shape := range want {
		i, ok := t.idx[name]
		if !ok {
			return nil, fmt.Errorf("nativetrain: %s: parameter %q missing", c.Variant, name)
		}
		if fmt.Sprint(params[i].Shape) != fmt.Sprint(shape) {
			return nil, fmt.Errorf("nativetrain: %s: parameter %q has shape %v, want %v", c.Variant, name, params[i].Shape, shape)
		}
	}
	V, H := c.Vocab, c.Heads
	if v.HasAngleTable() && !v.Learned && len(table) != V*H*(c.DModel/H/2) {
		return nil, fmt.Errorf("nativetrain: %s: fixed angle table has %d values, want %d", c.Variant, len(table), V*H*(c.DModel/H/2))
	}
	return t, nil
}

// paramShapes is the tensor list of ARCHITECTURE.md for c: name -> shape.
func paramShapes(c modelspec.Config, v modelspec.Variant) map[string][]int {
	D, F, V, H := c.DModel, c.DHidden, c.Vocab, c.Heads
	want := map[string][]int{"embed": {V, D}, "normf": {D}, "unembed": {D, V}}
	for l := 0; l < c.Layers; l++ {
		for name, shape := range map[string][]int{
			"norm1": {D}, "wq": {D, D}, "wk": {D, D}, "wv": {D, D}, "wo": {D, D},
			"norm2": {D}, "w1": {D, F}, "b1": {F}, "w2": {F, D}, "b2": {D},
		} {
			want[blockName(l, name)] = shape
		}
	}
	if v.Learned {
		want["angles"] = []int{V, H, c.DModel / H / 2}
	}
	for l := 0; l < c.Layers && v.KerpleLog; l++ {
		want[blockName(l, modelspec.KerpleP)], want[blockName(l, modelspec.KerpleA)] = []int{H}, []int{H}
	}
	for l := 0; l < c.Layers && v.AngleProj; l++ {
		want[blockName(l, modelspec.AngleProjName)] = []int{D, c.DModel / 2}
	}
	if v.Householder {
		R, K := modelspec.PathRank, modelspec.PathConv
		for l := 0; l < c.Layers; l++ {
			for name, shape := range map[string][]int{
				modelspec.PathDown: {D, R}, modelspec.PathUp: {R, D}, modelspec.PathConvW: {K, D}, modelspec.PathWBeta: {D, H}, modelspec.PathBBeta: {H},
			} {
				want[blockName(l, name)] = shape
			}
			if v.ForgetGate {
				want[blockName(l, modelspec.FoxWGate)], want[blockName(l, modelspec.FoxBGate)] = []int{D, H}, []int{H}
			}
		}
	}
	return want
}

func blockName(l int, t string) string { return fmt.Sprintf("block%03d/%s", l, t) }

// param returns the current value of a named tensor.
func (t *Trainer) param(vals [][]float32, name string) []float32 { return vals[t.idx[name]] }

// SetState replaces parameters and moments (copies them).
func (t *Trainer) SetState(params, m, v [][]float32) error {
	for _, x := range [][][]float32{params, m, v} {
		if len(x) != len(t.params) {
			return fmt.Errorf("nativetrain: %s: state has %d tensors, want %d", t.c.Variant, len(x), len(t.params))
		}
		for i, p := range t.params {
			if len(x[i]) != size(p.Shape) {
				return fmt.Errorf("nativetrain: %s: state tensor %q has %d values, want %d", t.c.Variant, p.Name, len(x[i]), size(p.Shape))
			}
		}
	}
	cp := func(x [][]float32) [][]float32 {
		out := make([][]float32, len(x))
		for i := range x {
			out[i] = append([]float32(nil), x[i]...)
		}
		return out
	}
	t.p, t.m, t.vv = cp(params), cp(m), cp(v)
	return nil
}

// State returns copies of the parameters and moments.
func (t *Trainer) State() (params, m, v [][]float32) {
	cp := func(x [][]float32) [][]float32 {
		out := make([][]float32, len(x))
		for i := range x {
			out[i] = append([]float32(nil), x[i]...)
		}
		return out
	}
	return cp(t.p), cp(t.m), cp(t.vv)
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// checkBatch validates a batch of rows windows of T tokens.
func (t *Trainer) checkBatch(tokens, targets []int32) (rows int, err error) {
	T := t.c.Context
	if len(tokens) == 0 || len(tokens)%T != 0 || len(targets) != len(tokens) {
		return 0, fmt.Errorf("nativetrain: %s: got %d inputs and %d targets, want equal multiples of the context %d", t.c.Variant, len(tokens), len(targets), T)
	}
	for i := range tokens {
		if tokens[i] < 0 || int(tokens[i]) >= t.c.Vocab || targets[i] < 0 || int(targets[i]) >= t.c.Vocab {
			return 0, fmt.Errorf("nativetrain: %s: token %d / target %d at position %d is outside vocabulary [0, %d)", t.c.Variant, tokens[i], targets[i], i, t.c.Vocab)
		}
	}
	return len(tokens) / T, nil
}

// Gradients returns the mean next-token loss of a batch and its gradient
// with respect to every parameter (in Param order), at params (nil: the
// trainer's current parameters).
func (t *Trainer) Gradients(params [][]float32, tokens, targets []int32) (float32, [][]float32, error) {
	loss, grads, err := t.gradients(params, tokens, targets)
	if err != nil {
		return 0, nil, err
	}
	out := make([][]float32, len(grads))
	for i, g := range grads {
		out[i] = append([]float32(nil), g...)
	}
	return loss, out, nil
}

// gradients is Gradients in the trainer's arena: valid until the next step.
func (t *Trainer) gradients(params [][]float32, tokens, targets []int32) (float32, [][]float32, error) {
	if params == nil {
		params = t.p
	}
	rows, err := t.checkBatch(tokens, targets)
	if err != nil {
		return 0, nil, err
	}
	t.ar.reset()
	f, err := t.forward(params, tokens, targets, rows, true)
	if err != nil {
		return 0, nil, err
	}
	return f.loss, t.backward(params, f), nil
}

// EvalLoss is the mean next-token loss of a batch (no gradient).
func (t *Trainer) EvalLoss(tokens, targets []int32) (float32, error) {
	rows, err := t.checkBatch(tokens, targets)
	if err != nil {
		return 0, err
	}
	t.ar.reset()
	f, err := t.forward(t.p, tokens, targets, rows, false)
	if err != nil {
		return 0, err
	}
	return f.loss, nil
}

// Step runs one AdamW step with learning rate lr and bias corrections
// bc1 = 1 - beta1^t, bc2 = 1 - beta2^t (package model's schedule) and
// returns the loss and the pre-clip global gradient norm.
func (t *Trainer) Step(lr, bc1, bc2 float32, tokens, targets []int32) (loss, gnorm float32, err error) {
	if t.p == nil {
		return 0, 0, fmt.Errorf("nativetrain: %s: Step before SetState", t.c.Variant)
	}
	loss, grads, err := t.gradients(nil, tokens, targets)
	if err != nil {
		return 0, 0, err
	}
	gnorm = t.adamW(grads, lr, bc1, bc2)
	return loss, gnorm, nil
}

// adamChunk is the number of elements one optimizer task covers.
const adamChunk = 1 << 14

// adamW mirrors package model's adamW (the same float32 operations in the
// same order) and returns the pre-clip norm. Work is cut into fixed chunks
// of each tensor; the squared norm is summed per chunk and the chunks in
// order, so the result does not depend on the workers.
func (t *Trainer) adamW(grads [][]float32, lr, bc1, bc2 float32) float32 {
	type chunk struct{ i, j0, j1 int }
	var chunks []chunk
	for i, g := range grads {
		for j0 := 0; j0 < len(g); j0 += adamChunk {
			chunks = append(chunks, chunk{i, j0, min(len(g), j0+adamChunk)})
		}
	}
	part := make([]float64, len(chunks))
	ParallelTensors(len(chunks), t.workers, func(c int) {
		var sq float64
		for _, x := range grads[chunks[c].i][chunks[c].j0:chunks[c].j1] {
			sq += float64(x) * float64(x)
		}
		part[c] = sq
	})
	var sq float64
	for _, x := range part {
		sq += x
	}
	gnorm := float32(math.Sqrt(sq))
	scale := float32(1)
	if clip := t.c.Clip; clip > 0 {
		scale = min(scale, 1/((gnorm+1e-6)*float32(1/clip)))
	}
	const b1, b2 = float32(modelspec.AdamBeta1), float32(modelspec.AdamBeta2)
	eps := float32(modelspec.AdamEps)
	ParallelTensors(len(chunks), t.workers, func(c int) {
		i, j0, j1 := chunks[c].i, chunks[c].j0, chunks[c].j1
		p, m, v, g := t.p[i][j0:j1], t.m[i][j0:j1], t.vv[i][j0:j1], grads[i][j0:j1]
		decay := t.params[i].Decay && t.c.WeightDecay > 0
		lr := lr
		if s := t.params[i].LRScale; s != 1 && s != 0 {
			lr *= float32(s) // as model's adamW: MulScalar(lr, s) in float32
		}
		lrwd := lr * float32(t.c.WeightDecay)
		for j := range p {
			gj := g[j] * scale
			m1 := m[j]*b1 + gj*(1-b1)
			v1 := v[j]*b2 + gj*gj*(1-b2)
			// float32(math.Sqrt(float64(x))) compiles to one SQRTSS and is
			// the correctly rounded float32 square root.
			step := (m1 / bc1) / (float32(math.Sqrt(float64(v1/bc2))) + eps)
			p1 := p[j] - step*lr
			if decay {
				p1 -= p[j] * lrwd
			}
			p[j], m[j], v[j] = p1, m1, v1
		}
	})
	return gnorm
}

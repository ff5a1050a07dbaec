package theory

import (
	"math"
	"math/cmplx"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// stepper is one per-token step family M_t, seen through the accumulated
// transport Pi_t = M_t ... M_1 that a model would keep per position. The
// transport between positions is then P_{j->i} = Pi_i Pi_j^T, so the state
// genuinely carries all t steps since the start of the context.
type stepper interface {
	dim() int
	stateLen() int
	reset(state []float64)                   // Pi_0 = I
	advance(rng *rand.Rand, state []float64) // Pi_t = M_t Pi_{t-1}, fresh M_t
	transposeApply(state, u, out []float64)  // out = Pi^T u
	relative(a, b []float64, p []float64)    // p = Pi_a Pi_b^T (d x d, row-major)
	sampleStep(rng *rand.Rand, p []float64)  // p = one step M
	// meanStep is E[M] = Re/Im of phi times I (block rotation for so2):
	// phi is exact when known=true; otherwise it is estimated from samples.
	meanStep() (phi complex128, known bool)
}

func newStepper(f StepFamily) stepper {
	switch f.Kind {
	case "so2":
		return &so2Stepper{m: f.Dim / 2, law: f.Angle, scale: f.Scale, drift: f.Drift, shrink: f.Shrink}
	case "expskew":
		return &matStepper{d: f.Dim, kind: f.Kind, scale: f.Scale}
	case "householder":
		return &matStepper{d: f.Dim, kind: f.Kind}
	default:
		return &matStepper{d: f.Dim, kind: "identity"}
	}
}

// so2Stepper: block-diagonal rotations, the state is the prefix sum of the
// angles of each block (RoPE with the position index replaced by a sum of
// token angles). Besides the i.i.d. laws of the config, it draws the laws the
// controls need (controls.go): angles 0 or pi, RoPE's fixed rotation, and a
// spread that shrinks along the sequence.
type so2Stepper struct {
	m      int
	law    string // "gaussian", "uniform", or a control's: "zeropi", "quarter", "rope"
	scale  float64
	drift  float64
	shrink float64 // > 0: the sd at token t is scale / sqrt(1 + t/shrink)
	t      int     // tokens advanced since reset
}

// ropeBase is RoPE's frequency base: block b turns by ropeBase^(-b/m) per token.
const ropeBase = 10000

func (s *so2Stepper) dim() int      { return 2 * s.m }
func (s *so2Stepper) stateLen() int { return s.m }
func (s *so2Stepper) reset(st []float64) {
	clear(st)
	s.t = 0
}
func (s *so2Stepper) angle(rng *rand.Rand, b int) float64 {
	switch s.law {
	case "uniform":
		return s.drift + s.scale*(2*rng.Float64()-1)
	case "zeropi":
		return math.Pi * float64(rng.IntN(2))
	case "quarter":
		return math.Pi / 2 * float64(rng.IntN(4))
	case "rope":
		return math.Pow(ropeBase, -float64(b)/float64(s.m))
	}
	sd := s.scale
	if s.shrink > 0 {
		sd /= math.Sqrt(1 + float64(s.t)/s.shrink)
	}
	return s.drift + sd*rng.NormFloat64()
}
func (s *so2Stepper) advance(rng *rand.Rand, st []float64) {
	for b := range st {
		st[b] += s.angle(rng, b)
	}
	s.t++
}
func (s *so2Stepper) transposeApply(st, u, out []float64) {
	for b, a := range st {
		sn, c := math.Sincos(a)
		u0, u1 := u[2*b], u[2*b+1]
		out[2*b] = c*u0 + sn*u1
		out[2*b+1] = -sn*u0 + c*u1
	}
}
func (s *so2Stepper) relative(a, b []float64, p []float64) {
	d := 2 * s.m
	clear(p[:d*d])
	for k := range a {
		writeRot(p, d, k, a[k]-b[k])
	}
}
func (s *so2Stepper) sampleStep(rng *rand.Rand, p []float64) {
	d := 2 * s.m
	clear(p[:d*d])
	for k := 0; k < s.m; k++ {
		writeRot(p, d, k, s.angle(rng, k))
	}
}

// meanStep: E[R(theta)] is the rotation-scaled matrix of the characteristic
// function phi = E[e^{i theta}] = e^{i drift} * (e^{-sigma^2/2} or sin(a)/a).
func (s *so2Stepper) meanStep() (complex128, bool) {
	var r float64
	switch s.law {
	case "zeropi", "quarter":
		return 0, true
	case "rope": // E[M] = M has norm 1; its phase differs per block
		return 1, true
	}
	if s.law == "uniform" {
		r = 1
		if s.scale != 0 {
			r = math.Sin(s.scale) / s.scale
		}
	} else {
		r = math.Exp(-s.scale * s.scale / 2)
	}
	return cmplx.Rect(r, s.drift), true
}

func writeRot(p []float64, d, k int, theta float64) {
	sn, c := math.Sincos(theta)
	i := 2 * k
	p[i*d+i], p[i*d+i+1] = c, -sn
	p[(i+1)*d+i], p[(i+1)*d+i+1] = sn, c
}

// matStepper: dense orthogonal steps (exp of skew, Householder, identity).
// The state is Pi_t, d x d row-major.
type matStepper struct {
	d     int
	kind  string
	scale float64
	w     []float64 // scratch
	tmp   []float64
}

func (s *matStepper) dim() int      { return s.d }
func (s *matStepper) stateLen() int { return s.d * s.d }
func (s *matStepper) reset(st []float64) {
	clear(st)
	for i := 0; i < s.d; i++ {
		st[i*s.d+i] = 1
	}
}
func (s *matStepper) advance(rng *rand.Rand, st []float64) {
	d := s.d
	switch s.kind {
	case "householder":
		// Pi <- (I - 2 w w^T) Pi = Pi - 2 w (w^T Pi): O(d^2), no matrix product.
		w := s.unitVector(rng)
		if len(s.tmp) < d {
			s.tmp = make([]float64, d)
		}
		row := s.tmp[:d]
		clear(row)
		for i := 0; i < d; i++ {
			wi := w[i]
			for j, v := range st[i*d : i*d+d] {
				row[j] += wi * v
			}
		}
		for i := 0; i < d; i++ {
			f := 2 * w[i]
			r := st[i*d : i*d+d]
			for j := range r {
				r[j] -= f * row[j]
			}
		}
	case "expskew":
		if len(s.tmp) < 2*d*d {
			s.tmp = make([]float64, 2*d*d)
		}
		s.sampleStep(rng, s.tmp[:d*d])
		m := mat.NewDense(d, d, s.tmp[:d*d])
		out := mat.NewDense(d, d, s.tmp[d*d:2*d*d])
		out.Mul(m, mat.NewDense(d, d, st))
		copy(st, out.RawMatrix().Data)
	}
}
func (s *matStepper) unitVector(rng *rand.Rand) []float64 {
	if len(s.w) < s.d {
		s.w = make([]float64, s.d)
	}
	return randomUnit(rng, s.w[:s.d])
}
func (s *matStepper) transposeApply(st, u, out []float64) {
	d := s.d
	clear(out[:d])
	for i := 0; i < d; i++ {
		ui := u[i]
		for j, v := range st[i*d : i*d+d] {
			out[j] += v * ui
		}
	}
}
func (s *matStepper) relative(a, b []float64, p []float64) {
	d := s.d
	out := mat.NewDense(d, d, p[:d*d])
	out.Mul(mat.NewDense(d, d, a), mat.NewDense(d, d, b).T())
}
func (s *matStepper) sampleStep(rng *rand.Rand, p []float64) {
	d := s.d
	p = p[:d*d]
	switch s.kind {
	case "householder":
		w := s.unitVector(rng)
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				p[i*d+j] = -2 * w[i] * w[j]
			}
			p[i*d+i]++
		}
	case "expskew":
		// A = sigma/sqrt(d) * (G - G^T)/sqrt(2): entries of variance sigma^2/d, so
		// that 1 - tr E[e^A]/d ~ sigma^2/2, comparable to an SO(2) angle of sd sigma.
		c := s.scale / math.Sqrt(2*float64(d))
		a := make([]float64, d*d)
		for i := 0; i < d; i++ {
			for j := i + 1; j < d; j++ {
				g := c * (rng.NormFloat64() - rng.NormFloat64())
				a[i*d+j], a[j*d+i] = g, -g
			}
		}
		var e mat.Dense
		e.Exp(mat.NewDense(d, d, a))
		copy(p, e.RawMatrix().Data)
	default:
		clear(p)
		for i := 0; i < d; i++ {
			p[i*d+i] = 1
		}
	}
}

// meanStep: Householder with w uniform has E[w w^T] = I/d, so E[M] = (1-2/d) I.
// exp(A) with a conjugation-invariant law of A has E[M] = c I with c unknown
// in closed form: it is estimated by the check.
func (s *matStepper) meanStep() (complex128, bool) {
	switch s.kind {
	case "householder":
		return complex(1-2/float64(s.d), 0), true
	case "expskew":
		return 0, false
	}
	return 1, true
}

// randomUnit fills v with a uniform point on the unit sphere.
func randomUnit(rng *rand.Rand, v []float64) []float64 {
	for {
		var n2 float64
		for i := range v {
			x := rng.NormFloat64()
			v[i] = x
			n2 += x * x
		}
		if n2 > 1e-300 {
			inv := 1 / math.Sqrt(n2)
			for i := range v {
				v[i] *= inv
			}
			return v
		}
	}
}

// haarOrthogonal samples Q from the Haar measure on O(d): QR of a Gaussian
// matrix, then Q <- Q diag(sign R_ii) (Mezzadri 2007). Without the sign fix
// the distribution depends on the QR algorithm's sign convention and is not
// Haar.
func haarOrthogonal(rng *rand.Rand, d int) *mat.Dense {
	return haarOrthogonalFix(rng, d, true)
}

func haarOrthogonalFix(rng *rand.Rand, d int, signFix bool) *mat.Dense {
	g := mat.NewDense(d, d, nil)
	raw := g.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	var qr mat.QR
	qr.Factorize(g)
	var q, r mat.Dense
	qr.QTo(&q)
	if signFix {
		qr.RTo(&r)
		for j := 0; j < d; j++ {
			if r.At(j, j) < 0 {
				for i := 0; i < d; i++ {
					q.Set(i, j, -q.At(i, j))
				}
			}
		}
	}
	return &q
}

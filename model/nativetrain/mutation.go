package nativetrain

import "routebench/model/native"

// Mutation checks: the agreement tests (model/native_agree_test.go) must
// fail when one piece of the backward pass is wrong. The pieces a mutation
// can break are function values of pieces, which New copies into the
// trainer once: the hot code calls them and reads no test flag. BreakForTest
// makes the next trainers built take the broken version of one piece.

// pieces are the parts of the backward pass that the mutation checks
// replace, each with its correct implementation in correctPieces.
type pieces struct {
	geluGrad   func(du, u, th []float32)                                                                                // gelu: du *= GELU'(u)
	probDot    func(dO, o []float32) float32                                                                            // softmax: sum_j P_ij dP_ij = dO_i . O_i
	unrotate   func(x, cos, sin []float32)                                                                              // rotation, rotation-sign: R(psi)^T x
	normDot    func(xr, da, gain, n []float32, D int, dot []float32)                                                    // rmsnorm: xr = da * gain; dot = xr . n per row
	embedGrad  func(t *Trainer, de, dx []float32, tokens []int32)                                                       // embed
	angleGrad  func(t *Trainer, dtable, dpsi []float32, tokens []int32, rows, T int)                                    // angles
	pathSteps  func(t *Trainer, params, grads [][]float32, l int, lt *layerTape, rows int, dw, dbeta, dG, da []float32) // gate
	convTaps   func(t *Trainer, dz, dyc, conv []float32, N int)                                                         // conv: dz from dyc through the taps
	betaGrad   func(dx, dbeta, beta []float32)                                                                          // beta: through beta = 2 sigmoid(x)
	keysViaR   func(g native.Gemm)                                                                                      // householder: dk += m2^T w
	routeSum   func(t *Trainer, dpsi []float32, rows int)                                                               // angleproj: dtheta_s = sum_{t>=s} dpsi_t
	carry      func(g native.Gemm)                                                                                      // path-carry: G_a += G_{a-1} P_a^T
	kerpleGrad func(t *Trainer, params, grads [][]float32, l int, dist []float64, rows int, scale float64)              // kerple: dp, da from dS by distance
}

var correctPieces = pieces{
	geluGrad:   native.GELUGradMul,
	probDot:    dot32,
	unrotate:   func(x, cos, sin []float32) { native.RotatePairs(x, cos, sin, -1) },
	normDot:    normDot,
	embedGrad:  (*Trainer).embeddingGradient,
	angleGrad:  (*Trainer).angleGradient,
	pathSteps:  (*Trainer).pathStepsBackward,
	convTaps:   (*Trainer).convTapsBackward,
	betaGrad:   betaGrad,
	keysViaR:   runGemm1,
	routeSum:   (*Trainer).routeSuffixSum,
	carry:      runGemm1,
	kerpleGrad: (*Trainer).kerpleGradient,
}

// brokenPieces are the wrong versions, by mutation name.
var brokenPieces = map[string]func(p *pieces){
	"gelu": func(p *pieces) {
		p.geluGrad = func(du, _, th []float32) { // the u (1 - th^2) term dropped
			for j, t := range th {
				du[j] *= 0.5 * (1 + t)
			}
		}
	},
	"softmax": func(p *pieces) { p.probDot = func(dO, o []float32) float32 { return 0 } },
	// un-rotate with cos for sin, or rotate further instead of back (the
	// second is invisible at zero angles: sin 0 = 0).
	"rotation":      func(p *pieces) { p.unrotate = func(x, cos, sin []float32) { native.RotatePairs(x, cos, cos, -1) } },
	"rotation-sign": func(p *pieces) { p.unrotate = func(x, cos, sin []float32) { native.RotatePairs(x, cos, sin, 1) } },
	"angles":        func(p *pieces) { p.angleGrad = func(*Trainer, []float32, []float32, []int32, int, int) {} },
	"embed":         func(p *pieces) { p.embedGrad = func(*Trainer, []float32, []float32, []int32) {} },
	"rmsnorm": func(p *pieces) {
		p.normDot = func(xr, da, gain, n []float32, D int, dot []float32) { normDot(xr, da, gain, n, D, dot); clear(dot) }
	},
	"householder": func(p *pieces) { p.keysViaR = func(native.Gemm) {} },
	"beta":        func(p *pieces) { p.betaGrad = func(dx, _, _ []float32) { clear(dx) } },
	"conv":        func(p *pieces) { p.convTaps = func(_ *Trainer, dz, dyc, _ []float32, _ int) { copy(dz, dyc) } },
	"gate": func(p *pieces) {
		p.pathSteps = func(t *Trainer, params, grads [][]float32, l int, lt *layerTape, rows int, dw, dbeta, dG, da []float32) {
			clear(dG) // the forget gate's gradient dropped
			t.pathStepsBackward(params, grads, l, lt, rows, dw, dbeta, dG, da)
		}
	},
	"angleproj": func(p *pieces) { p.routeSum = func(*Trainer, []float32, int) {} },
	// The chunked transport's backward pass without the carry of the
	// queries' gradient through the blocks between query and key.
	"path-carry": func(p *pieces) { p.carry = func(native.Gemm) {} },
	// KERPLE's bias gradient taken as dS itself, which carries the 1/sqrt(d)
	// scale of the product q.k (the bias is added after it).
	"kerple": func(p *pieces) {
		p.kerpleGrad = func(t *Trainer, params, grads [][]float32, l int, dist []float64, rows int, _ float64) {
			t.kerpleGradient(params, grads, l, dist, rows, 1)
		}
	},
}

// broken names the mutation the next New applies ("": none).
var broken string

// newPieces is what New gives a trainer: the correct pieces, or with one
// broken (BreakForTest).
func newPieces() *pieces {
	p := correctPieces
	if f, ok := brokenPieces[broken]; ok {
		f(&p)
	}
	return &p
}

// Mutation is a piece BreakForTest can break, a variant whose gradient
// goes through it and the context the check needs (0: the smoke shape's;
// a skipped tile needs more than one 64-column panel).
type Mutation struct {
	Piece, Variant string
	Context        int
}

var mutations = []Mutation{
	{"gelu", "learned-qkv", 0}, {"softmax", "learned-qkv", 0}, {"rmsnorm", "learned-qkv", 0},
	{"rotation", "learned-qkv", 0}, {"rotation-sign", "learned-qkv", 0}, {"angles", "learned-qkv", 0}, {"embed", "learned-qkv", 0},
	// PaTH (householder_steps.go, householder_attention.go): the keys' gradient through the
	// transport's R, the strengths', the short convolution's taps, FoX's gate.
	{"householder", "path", 0}, {"beta", "path", 0}, {"conv", "path", 0}, {"gate", "path-fox", 0},
	// PaTH's chunked transport (64-step blocks): the gradient carried through
	// the blocks between a query and a key needs three blocks.
	{"path-carry", "path", 130},
	// learned-proj-qkv (angleproj.go): the angles' gradient taken per
	// position (dtheta_s = dpsi_s) instead of the suffix sum over the route.
	{"angleproj", "learned-proj-qkv", 0},
	// kerple-log (kerple.go): the log bias's p and a gradients.
	{"kerple", "kerple-log", 0},
}

// Mutations lists the pieces BreakForTest can break.
func Mutations() []Mutation { return append([]Mutation(nil), mutations...) }

// BreakForTest makes the named piece of the backward pass wrong in the
// trainers New builds until the returned function restores it (for tests
// only; not safe while another goroutine calls New). It panics on a name
// Mutations does not list.
func BreakForTest(piece string) (restore func()) {
	if _, ok := brokenPieces[piece]; !ok {
		panic("nativetrain: BreakForTest: no mutation " + piece)
	}
	was := broken
	broken = piece
	return func() { broken = was }
}

// dot32 is a . b in float32, in index order.
func dot32(a, b []float32) float32 {
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// normDot sets xr = da * gain on len(dot) <= 4 consecutive rows of D and
// dot[r] = xr_r . n_r, each in index order (rowDots).
func normDot(xr, da, gain, n []float32, D int, dot []float32) {
	for r := range dot {
		native.Mul(xr[r*D:(r+1)*D], da[r*D:(r+1)*D], gain)
	}
	rowDots(xr, n, D, dot)
}

// betaGrad sets dx = dbeta * d beta / dx for beta = 2 sigmoid(x):
// d beta / dx = beta (1 - beta / 2).
func betaGrad(dx, dbeta, beta []float32) {
	for i, b := range beta {
		dx[i] = dbeta[i] * b * (1 - b/2)
	}
}

// runGemm1 runs g on the calling goroutine.
func runGemm1(g native.Gemm) {
	g.Workers = 1
	g.Run()
}

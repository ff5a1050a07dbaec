package evaluate

import (
	"fmt"
	"slices"

	"routebench/model/nativeeval"
	"routebench/modelspec"
)

// The route's mixing window inside the trained model (issue 39). The
// theory stage's check 1 (stages/theory/mixing.go) measures, on simulated
// routes, the correlation c(n) of a transport over n steps with the
// identity and the window n* after which |c(n)| stays below a threshold.
// Here the steps are the trained model's own, on held-out text:
//
//   - accumulated SO(2) (random-*, learned-*): per layer, head and pair,
//     c(n) = mean over routes of cos(sum of the route's n angle
//     increments), a route being the tokens j+1..j+n of a window;
//   - PaTH: per layer and head, c(n) = mean over routes of
//     tr(H_{j+n} ... H_{j+1}) / d;
//   - RoPE: c(n) = cos(n omega_p), the same for every route.
//
// n* = 1 + the last grid n with |c(n)| >= mixingThreshold. Beside it the
// window the measured spectral gap predicts: for SO(2) rho = |mean over
// tokens of exp(i a_t)| and n* = the first n with rho^n < threshold; for
// PaTH c(n) ~ tr(E[H]^n) / d from the mean step E[H] = I - E[beta w w^T].
//
// It runs on the DesignPrefixes pass (the longest windows, once each), on
// the first routeWindows windows only: every length's routes are those
// that end inside its prefix of those windows (T included: for the mixing
// window T is the long windows' first T positions, not T's own windows).

// mixingThreshold is the theory stage's mixing threshold epsilon of the
// cpu profile (stages/theory/config.go, Mixing.Threshold = 0.1), so the
// trained model's n* reads on the theory's scale.
const mixingThreshold = 0.1

// routeWindows is how many of the long windows the mixing window reads.
const routeWindows = 2

// Longest routes: N = 4,096, the grid's end that docs/statistics.md
// pre-registers for n* (mechanism claims v4m: a window not found by N
// counts as > N). SO(2) routes cost O(P) per (route, grid length) from
// prefix sums and could reach farther, but a longer grid would change the
// pre-registered n*; a PaTH route carries a d x d product, O(d^2) per
// step, so its routes are budgeted (pathLevels).
const (
	so2MaxRoute  = 4096
	pathMaxRoute = 4096
)

// pathLevels are PaTH's route families: routes of up to N steps starting
// every N positions (j = 0, N, 2N, ...), so that each level costs one
// step per position and layer-head, and short routes get many samples
// while the longest still get L / N each.
var pathLevels = []int{512, pathMaxRoute}

// routeBroken names a piece that tests break on purpose ("offset": a
// route of n tokens starts one token early, taking n + 1 increments) to
// prove that the hand-built references can fail; empty in every real run.
var routeBroken string

// Kinds of route (RouteMixing.Kind).
const (
	routeSO2  = "so2"
	routePaTH = "path"
	routeRoPE = "rope"
)

// RouteMixing is the route's mixing window of one model. Format 4.
type RouteMixing struct {
	Kind      string  `json:"kind"` // so2, path or rope
	Threshold float64 `json:"threshold"`
	// Windows is how many of the long windows the routes are drawn from
	// (the first ones); Design says which routes.
	Windows int                 `json:"windows"`
	Design  string              `json:"design"`
	Lengths []RouteMixingLength `json:"lengths"`
	// Heads are the windows per (layer, head, pair) at the longest length
	// (pair -1 for PaTH).
	Heads []RouteWindow `json:"heads"`
	// SharedTable says that every layer's steps are one token table (the
	// random-* and learned-qk/qkv angle tables): the units of a layer
	// after the first repeat the first's, one measurement, not several.
	SharedTable bool `json:"shared_table,omitempty"`
	// Repeated is the repeated-byte control's text (routecontrol.go);
	// nil when it did not run (RoPE: no route).
	Repeated *RepeatedText `json:"repeated,omitempty"`
}

// RouteMixingLength is the mixing window at one evaluation length.
type RouteMixingLength struct {
	L    int   `json:"length"`
	Grid []int `json:"grid"` // route lengths n, those shorter than L
	// Routes is the number of routes behind c(n) per grid n (0 for RoPE:
	// exact).
	Routes []int64 `json:"routes"`
	// Curve is the mean over (layer, head, pair) of c(n); Predicted the
	// mean of the gap's prediction (SO(2): Re(phi^n) with phi = mean
	// exp(i a_t); PaTH: tr(E[H]^n) / d).
	Curve     []float64 `json:"curve"`
	Predicted []float64 `json:"predicted_curve"`
	// Noise is the sampling noise of one (layer, head, pair)'s c(n): the
	// root mean square over them of |c_1(n) - c_2(n)| / 2, the split-half
	// estimate from the two windows (the standard error of their mean).
	// An |c(n)| near the threshold within a few Noise is noise-limited.
	// Empty for RoPE or with fewer than two windows.
	Noise []float64 `json:"noise,omitempty"`
	// CurveWindow is n* of the mean curve (0 when not found).
	CurveWindow int `json:"curve_window"`
	// Window summarises n* over (layer, head, pair), PredictedWindow the
	// predicted n*.
	Window          WindowSummary `json:"window"`
	PredictedWindow WindowSummary `json:"predicted_window"`
}

// WindowSummary summarises n* over (layer, head, pair).
type WindowSummary struct {
	Count int `json:"count"` // (layer, head, pair)s
	// Median counts a window not found as infinite: -1 when that is the
	// median.
	Median float64 `json:"median"`
	Max    int     `json:"max"`   // largest n* found (0: none found)
	Found  float64 `json:"found"` // fraction found
}

// RouteWindow is one (layer, head, pair)'s window at the longest length.
type RouteWindow struct {
	Layer int `json:"layer"`
	Head  int `json:"head"`
	Pair  int `json:"pair"` // -1: PaTH (the whole head)
	// Window is n* (0 when not found within the longest route).
	Window int `json:"window"`
	// Predicted is the gap's n* (0 when the gap predicts none: rho = 1, or
	// beyond maxPredicted).
	Predicted int `json:"predicted"`
	// Rho is |mean exp(i a_t)| (SO(2), RoPE) or ||E[H]||_op (PaTH).
	Rho float64 `json:"rho"`
	// Repeated is n* on the repeated-byte control text, on the same grid
	// (0 when not found within it; RouteMixing.Repeated).
	Repeated int `json:"repeated_window"`
}

// routeAcc accumulates the route sums over windows, by length.
type routeAcc struct {
	kind       string
	lengths    []int // ascending
	grid       []int
	layers, H  int
	d, P       int
	units      int         // (layer, head, pair)s, or (layer, head)s for PaTH
	sum        [][]float64 // [length][grid * units] sums of c over routes
	cnt        [][]int64   // [length][grid] routes
	sum1       [][]float64 // sum and cnt of the first window alone
	cnt1       [][]int64
	phi        [][]float64 // SO(2): [length][units * 2] sums of cos, sin of a_t; PaTH: [length][units * d * d] sums of beta w w^T
	tokens     []int64     // [length] positions in phi
	windows    int
	shared     bool      // every traced layer's angles are layer 0's table (RouteMixing.SharedTable)
	omega      []float64 // RoPE frequencies
	maxWindows int
}

// newRouteAcc prepares the mixing window for a model, or returns nil when
// it has no route to measure (nope, alibi) or the run is not the plain
// prefixes design (independent windows, RoPE extended at inference).
func newRouteAcc(cfg Config, a modelspec.Arch) *routeAcc {
	if cfg.Design != DesignPrefixes || cfg.RopeScaling != "" || len(cfg.Multipliers) == 0 {
		return nil
	}
	r := &routeAcc{layers: a.Layers, H: a.Heads, d: a.DHead(), P: a.DHead() / 2, maxWindows: routeWindows}
	for _, m := range cfg.Multipliers {
		r.lengths = append(r.lengths, m*cfg.Context)
	}
	slices.Sort(r.lengths)
	r.lengths = slices.Compact(r.lengths)
	Lmax := r.lengths[len(r.lengths)-1]
	switch {
	case a.Householder:
		r.kind, r.units = routePaTH, a.Layers*a.Heads
		r.grid = routeGrid(min(pathMaxRoute, Lmax-1))
	case a.Rotation == modelspec.RotationAccumulated:
		r.kind, r.units = routeSO2, a.Layers*a.Heads*r.P
		r.grid = routeGrid(min(so2MaxRoute, Lmax-1))
	case a.Rotation == modelspec.RotationRoPE:
		r.kind, r.units = routeRoPE, a.Layers*a.Heads*r.P
		r.grid = routeGrid(min(so2MaxRoute, Lmax-1))
		r.omega = modelspec.RopeFrequencies(a.DHead(), a.RopeBase)
		return r
	default:
		return nil
	}
	nl, G := len(r.lengths), len(r.grid)
	r.sum, r.cnt, r.phi, r.tokens = make([][]float64, nl), make([][]int64, nl), make([][]float64, nl), make([]int64, nl)
	per := 2
	if r.kind == routePaTH {
		per = r.d * r.d
	}
	for k := range r.lengths {
		r.sum[k], r.cnt[k], r.phi[k] = make([]float64, G*r.units), make([]int64, G), make([]float64, r.units*per)
	}
	return r
}

// wants says whether window w's forward pass should trace its route.
func (r *routeAcc) wants(w int) bool {
	return r != nil && r.kind != routeRoPE && w < r.maxWindows
}

func clone2[T any](x [][]T) [][]T {
	out := make([][]T, len(x))
	for i, r := range x {
		out[i] = slices.Clone(r)
	}
	return out
}

// routeGrid is the log grid 1, 2, 3, 4, 6, 8, 12, ... (powers of two and
// 1.5 times them) up to nmax, with nmax itself last.
func routeGrid(nmax int) []int {
	var g []int
	for b := 1; b <= nmax; b *= 2 {
		g = append(g, b)
		if b >= 2 && b+b/2 <= nmax {
			g = append(g, b+b/2)
		}
	}
	if len(g) > 0 && g[len(g)-1] != nmax {
		g = append(g, nmax)
	}
	return g
}

// lengthIndex[e] is the first length whose prefix holds position e.
func (r *routeAcc) lengthIndex() []uint8 {
	Lmax := r.lengths[len(r.lengths)-1]
	idx := make([]uint8, Lmax)
	k := 0
	for e := range idx {
		for e >= r.lengths[k] {
			k++
		}
		idx[e] = uint8(k)
	}
	return idx
}

// add pools window w's traced route (nativeeval.Result.Route of a pass
// over the longest length, with RouteTrace set as wants(w) says).
func (r *routeAcc) add(w int, route []nativeeval.LayerRoute) error {
	if !r.wants(w) {
		return nil
	}
	if len(route) != r.layers {
		return fmt.Errorf("evaluate: route mixing got %d traced layers, want %d (one per layer: pass Options.RouteTrace to a %s model)", len(route), r.layers, r.kind)
	}
	Lmax := r.lengths[len(r.lengths)-1]
	for _, lr := range route {
		if r.kind == routeSO2 && len(lr.Angles) != Lmax*r.H*r.P || r.kind == routePaTH && len(lr.W) != r.H*Lmax*r.d {
			return fmt.Errorf("evaluate: route mixing: layer %d traced %d angles, %d directions for a window of %d (want the longest length's pass)", lr.Layer, len(lr.Angles), len(lr.W), Lmax)
		}
	}
	if r.kind == routeSO2 {
		r.shared = len(route) > 1
		for _, lr := range route[1:] {
			r.shared = r.shared && &lr.Angles[0] == &route[0].Angles[0]
		}
		r.addSO2(route)
	} else {
		r.addPaTH(route)
	}
	if r.windows == 0 { // the first window alone, for the split-half noise
		r.sum1, r.cnt1 = clone2(r.sum), clone2(r.cnt)
	}
	r.windows++
	return nil
}

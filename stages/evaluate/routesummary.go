package evaluate

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"
)

// maxPredicted caps the predicted windows; beyond it the gap predicts no
// window within any context this harness evaluates (and rho = 1 up to
// rounding, a constant rotation, stays "none").
const maxPredicted = 1 << 22

// result summarises the pooled routes; nil when nothing was measured.
func (r *routeAcc) result() *RouteMixing {
	if r == nil || r.kind != routeRoPE && r.windows == 0 {
		return nil
	}
	out := &RouteMixing{Kind: r.kind, Threshold: mixingThreshold, Windows: r.windows, Design: r.design(), SharedTable: r.shared}
	U := r.units
	for k, L := range r.lengths {
		grid, routes, curves := r.curves(k)
		_, _, phi, tokens := r.pooled(k)
		ng := len(grid)
		lr := RouteMixingLength{L: L, Grid: grid, Routes: routes, Curve: make([]float64, ng), Predicted: make([]float64, ng)}
		wins, found := make([]int, U), make([]bool, U)
		preds, pfound := make([]int, U), make([]bool, U)
		rhos := make([]float64, U)
		pcurve := make([]float64, ng)
		for u, curve := range curves {
			rhos[u], preds[u], pfound[u] = r.unitPrediction(u, grid, phi, tokens, pcurve)
			wins[u], found[u] = windowOf(curve, grid)
			for g := 0; g < ng; g++ {
				lr.Curve[g] += curve[g] / float64(U)
				lr.Predicted[g] += pcurve[g] / float64(U)
			}
		}
		lr.Noise = r.noise(k, curves)
		if n, ok := windowOf(lr.Curve, grid); ok {
			lr.CurveWindow = n
		}
		lr.Window, lr.PredictedWindow = summarizeWindows(wins, found), summarizeWindows(preds, pfound)
		out.Lengths = append(out.Lengths, lr)
		if k == len(r.lengths)-1 {
			for u := 0; u < U; u++ {
				hw := RouteWindow{Layer: u / (U / r.layers), Head: (u / (U / r.layers / r.H)) % r.H, Pair: -1, Rho: rhos[u]}
				if r.kind != routePaTH {
					hw.Pair = u % r.P
				}
				if found[u] {
					hw.Window = wins[u]
				}
				if pfound[u] {
					hw.Predicted = preds[u]
				}
				out.Heads = append(out.Heads, hw)
			}
		}
	}
	return out
}

// pooled is length k's sums: every bucket up to its own (a length holds
// every route that ends inside its prefix). Nil for RoPE.
func (r *routeAcc) pooled(k int) (sum []float64, cnt []int64, phi []float64, tokens int64) {
	if r.kind == routeRoPE {
		return nil, nil, nil, 0
	}
	sum, cnt, phi = make([]float64, len(r.sum[0])), make([]int64, len(r.cnt[0])), make([]float64, len(r.phi[0]))
	for b := 0; b <= k; b++ {
		for i, x := range r.sum[b] {
			sum[i] += x
		}
		for i, x := range r.cnt[b] {
			cnt[i] += x
		}
		for i, x := range r.phi[b] {
			phi[i] += x
		}
		tokens += r.tokens[b]
	}
	return sum, cnt, phi, tokens
}

// noise is the split-half noise of length k's per-unit curves c
// (RouteMixingLength.Noise); nil without two windows.
func (r *routeAcc) noise(k int, c [][]float64) []float64 {
	if r.kind == routeRoPE || r.windows < 2 || len(c) == 0 {
		return nil
	}
	sum, cnt, _, _ := r.pooled(k)
	first := &routeAcc{kind: r.kind, units: r.units, sum: r.sum1, cnt: r.cnt1, phi: r.phi, tokens: r.tokens}
	sum1, cnt1, _, _ := first.pooled(k)
	out := make([]float64, len(c[0]))
	for g := range out {
		n1, n2 := cnt1[g], cnt[g]-cnt1[g]
		if n1 == 0 || n2 == 0 {
			return out[:g]
		}
		var ss float64
		for u := range c {
			c1 := sum1[g*r.units+u] / float64(n1)
			c2 := (sum[g*r.units+u] - sum1[g*r.units+u]) / float64(n2)
			ss += (c1 - c2) * (c1 - c2) / 4
		}
		out[g] = math.Sqrt(ss / float64(len(c)))
	}
	return out
}

// curves is length k's grid (the route lengths with routes inside it),
// routes per grid n (nil for RoPE) and c(n) per unit ([unit][grid]).
func (r *routeAcc) curves(k int) ([]int, []int64, [][]float64) {
	L := r.lengths[k]
	sum, cnt, _, _ := r.pooled(k)
	ng := 0
	for g, n := range r.grid {
		if n > L-1 || r.kind != routeRoPE && cnt[g] == 0 {
			break
		}
		ng = g + 1
	}
	c := make([][]float64, r.units)
	for u := range c {
		c[u] = make([]float64, ng)
		for g := 0; g < ng; g++ {
			c[u][g] = r.unitCorr(u, g, sum, cnt)
		}
	}
	var routes []int64
	if cnt != nil {
		routes = cnt[:ng]
	}
	return slices.Clone(r.grid[:ng]), routes, c
}

// design describes the routes.
func (r *routeAcc) design() string {
	switch r.kind {
	case routeSO2:
		return fmt.Sprintf("every start j of the first %d windows of length %d (stride 1), routes j+1..j+n ending inside each length's prefix, n up to %d",
			r.maxWindows, r.lengths[len(r.lengths)-1], r.grid[len(r.grid)-1])
	case routePaTH:
		return fmt.Sprintf("per level N in %v, routes from j = 0, N, 2N, ... of up to N steps, in the first %d windows of length %d, ending inside each length's prefix",
			pathLevels, r.maxWindows, r.lengths[len(r.lengths)-1])
	}
	return "exact: c(n) = cos(n omega_p), no routes sampled"
}

// unitCorr is c(grid[g]) of unit u.
func (r *routeAcc) unitCorr(u, g int, sum []float64, cnt []int64) float64 {
	if r.kind == routeRoPE {
		return math.Cos(float64(r.grid[g]) * r.omega[u%r.P])
	}
	return sum[g*r.units+u] / float64(cnt[g])
}

// unitPrediction is unit u's gap (rho), predicted window and predicted
// curve on grid (written into pc).
func (r *routeAcc) unitPrediction(u int, grid []int, phi []float64, tokens int64, pc []float64) (float64, int, bool) {
	switch r.kind {
	case routeRoPE: // a fixed rotation per step: |phi| = 1, no gap
		for g, n := range grid {
			pc[g] = math.Cos(float64(n) * r.omega[u%r.P])
		}
		return 1, 0, false
	case routeSO2:
		ph := complex(phi[2*u], phi[2*u+1]) / complex(float64(tokens), 0)
		for g, n := range grid {
			pc[g] = real(cmplx.Pow(ph, complex(float64(n), 0)))
		}
		n, ok := predictedWindow(cmplx.Abs(ph), mixingThreshold)
		return cmplx.Abs(ph), n, ok
	}
	d := r.d
	M := make([]float64, d*d) // E[H] = I - E[beta w w^T], from the upper triangle
	for a := 0; a < d; a++ {
		for c := a; c < d; c++ {
			x := -phi[u*d*d+a*d+c] / float64(tokens)
			M[a*d+c], M[c*d+a] = x, x
		}
		M[a*d+a]++
	}
	ev := symEigenvalues(M, d)
	var op float64
	for _, x := range ev {
		op = math.Max(op, math.Abs(x))
	}
	for g, n := range grid {
		pc[g] = traceOfPower(ev, n)
	}
	n, ok := traceWindow(ev, mixingThreshold)
	return op, n, ok
}

// traceOfPower is tr(E^n) / d for a symmetric E with eigenvalues ev.
func traceOfPower(ev []float64, n int) float64 {
	var s float64
	for _, x := range ev {
		s += math.Pow(x, float64(n))
	}
	return s / float64(len(ev))
}

// traceWindow is 1 + the last n with |tr(E^n)| / d >= eps, ok false when
// it lies beyond maxPredicted. |tr(E^n)| / d <= mean |lambda|^n, which
// decreases, so the search ends at the first n where that bound is below
// eps; with no negative eigenvalue the bound is the value itself.
func traceWindow(ev []float64, eps float64) (int, bool) {
	abs := make([]float64, len(ev))
	neg := false
	for i, x := range ev {
		abs[i], neg = math.Abs(x), neg || x < 0
	}
	if traceOfPower(abs, maxPredicted) >= eps {
		return 0, false
	}
	lo, hi := 0, maxPredicted // bound(lo) >= eps (n = 0: 1), bound(hi) < eps
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; traceOfPower(abs, mid) >= eps {
			lo = mid
		} else {
			hi = mid
		}
	}
	if !neg {
		return hi, true
	}
	pw := make([]float64, len(ev)) // |tr(E^n)| / d for n = 1..lo, by repeated products
	copy(pw, ev)
	last := 0
	for n := 1; n <= lo; n++ {
		var s float64
		for i, x := range pw {
			s += x
			pw[i] = x * ev[i]
		}
		if math.Abs(s)/float64(len(ev)) >= eps {
			last = n
		}
	}
	return last + 1, true
}

// predictedWindow is the smallest n with rho^n < eps, the theory stage's
// rule (stages/theory/bounds.go); ok is false when rho >= 1 or n would
// exceed maxPredicted.
func predictedWindow(rho, eps float64) (int, bool) {
	if rho >= 1 || math.IsNaN(rho) {
		return 0, false
	}
	if rho < eps {
		return 1, true
	}
	x := math.Floor(math.Log(eps)/math.Log(rho)) + 1
	if x > maxPredicted {
		return 0, false
	}
	n := int(x)
	for n > 1 && math.Pow(rho, float64(n-1)) < eps { // rounding in the logs
		n--
	}
	for math.Pow(rho, float64(n)) >= eps {
		n++
	}
	return n, true
}

// windowOf is n* = 1 + the last grid n with |c(n)| >= mixingThreshold,
// found false when that is the grid's last n (the window may lie beyond).
func windowOf(c []float64, grid []int) (int, bool) {
	last := -1
	for g, x := range c {
		if math.Abs(x) >= mixingThreshold {
			last = g
		}
	}
	if len(grid) == 0 || last == len(grid)-1 {
		return 0, false
	}
	if last < 0 {
		return 1, true
	}
	return grid[last] + 1, true
}

// summarizeWindows is the median (windows not found counted as
// infinite), the largest found and the fraction found.
func summarizeWindows(ns []int, found []bool) WindowSummary {
	s := WindowSummary{Count: len(ns)}
	if len(ns) == 0 {
		return s
	}
	vals := make([]float64, len(ns))
	nf := 0
	for i, n := range ns {
		vals[i] = math.Inf(1)
		if found[i] {
			vals[i] = float64(n)
			s.Max = max(s.Max, n)
			nf++
		}
	}
	slices.Sort(vals)
	m := len(vals) / 2
	s.Median = vals[m]
	if len(vals)%2 == 0 {
		s.Median = (vals[m-1] + vals[m]) / 2
	}
	if math.IsInf(s.Median, 1) {
		s.Median = -1
	}
	s.Found = float64(nf) / float64(len(ns))
	return s
}

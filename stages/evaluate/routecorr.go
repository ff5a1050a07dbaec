package evaluate

import (
	"math"

	"routebench/model/native"
	"routebench/model/nativeeval"
	"routebench/modelspec"
)

// The route sums of one window, per (layer, head) in parallel: each job
// fills its own part, and parts are merged in a fixed order, so the sums
// are bitwise the same for any number of workers.

// routePart is one (layer, head)'s sums over one window, by length bucket
// (routes are put in the bucket of their last position; result() adds the
// buckets up, a length holding every route that ends inside it).
type routePart struct {
	sum []float64 // [bucket][grid][P] (SO(2)) or [bucket][grid] (PaTH)
	cnt []int64   // [bucket][grid]
	phi []float64 // [bucket][P][2] sums of cos, sin a_t, or [bucket][d*d] sums of beta w w^T
}

// routeStart is where a route of the positions j+1.. begins: j, or j - 1
// under routeBroken "offset" (one step too many).
func routeStart(j int) int {
	if routeBroken == "offset" {
		return j - 1
	}
	return j
}

// addSO2 adds one window's SO(2) routes. A route j -> j+n has angle
// psi_{j+n} - psi_j with psi_i = sum_{t<=i} a_t (summed as the forward pass
// sums it, modelspec.AccumulateAngles), so cos of it is
// cos psi_e cos psi_j + sin psi_e sin psi_j: O(P) per route and grid n
// from the prefix sums, for every start j.
func (r *routeAcc) addSO2(route []nativeeval.LayerRoute) {
	idx := r.lengthIndex()
	type job struct{ layer, h, same int } // same >= 0: the layer repeats that layer's table
	var jobs []job
	for l, lr := range route {
		same := -1
		for e := 0; e < l; e++ {
			if &route[e].Angles[0] == &lr.Angles[0] {
				same = e
				break
			}
		}
		for h := 0; h < r.H; h++ {
			jobs = append(jobs, job{l, h, same})
		}
	}
	parts := make([]*routePart, len(jobs))
	native.ParallelFor(len(jobs), 0, func(k int) {
		if jb := jobs[k]; jb.same < 0 {
			parts[k] = r.so2Head(route[jb.layer].Angles, jb.h, idx)
		}
	})
	nl, G, P := len(r.lengths), len(r.grid), r.P
	for k, jb := range jobs {
		pt := parts[k]
		if jb.same >= 0 {
			pt = parts[jb.same*r.H+jb.h]
		}
		for b := 0; b < nl; b++ {
			for g := 0; g < G; g++ {
				for p := 0; p < P; p++ {
					r.sum[b][g*r.units+(jb.layer*r.H+jb.h)*P+p] += pt.sum[(b*G+g)*P+p]
				}
				if k == 0 {
					r.cnt[b][g] += pt.cnt[b*G+g]
				}
			}
			for p := 0; p < P; p++ {
				u := (jb.layer*r.H+jb.h)*P + p
				r.phi[b][2*u] += pt.phi[(b*P+p)*2]
				r.phi[b][2*u+1] += pt.phi[(b*P+p)*2+1]
			}
		}
	}
	for _, e := range idx {
		r.tokens[e]++
	}
}

// so2Head is one head's SO(2) route sums over a window of increments inc
// ([L][H][P]).
func (r *routeAcc) so2Head(inc []float32, h int, idx []uint8) *routePart {
	L, H, P, G, nl := len(idx), r.H, r.P, len(r.grid), len(r.lengths)
	pt := &routePart{sum: make([]float64, nl*G*P), cnt: make([]int64, nl*G), phi: make([]float64, nl*P*2)}
	cs, sn := make([]float64, L*P), make([]float64, L*P)
	acc := make([]float64, P)
	for i := 0; i < L; i++ {
		row := inc[(i*H+h)*P : (i*H+h+1)*P]
		modelspec.AccumulateAngles(acc, row)
		b := int(idx[i])
		for p, x := range acc {
			sn[i*P+p], cs[i*P+p] = math.Sincos(x)
			s, c := math.Sincos(float64(row[p]))
			pt.phi[(b*P+p)*2] += c
			pt.phi[(b*P+p)*2+1] += s
		}
	}
	one, zero := make([]float64, P), make([]float64, P) // psi_{-1} = 0
	for p := range one {
		one[p] = 1
	}
	for j := 0; j < L-1; j++ {
		cj, sj := one, zero
		if s := routeStart(j); s >= 0 {
			cj, sj = cs[s*P:(s+1)*P], sn[s*P:(s+1)*P]
		}
		for g, n := range r.grid {
			e := j + n
			if e >= L {
				break
			}
			b := int(idx[e])
			dst := pt.sum[(b*G+g)*P : (b*G+g+1)*P]
			ce, se := cs[e*P:(e+1)*P], sn[e*P:(e+1)*P]
			for p := range dst {
				dst[p] += ce[p]*cj[p] + se[p]*sj[p]
			}
			pt.cnt[b*G+g]++
		}
	}
	return pt
}

// addPaTH adds one window's PaTH routes: per level N, routes from
// j = 0, N, 2N, ..., each carrying the product of its steps in float64 by
// rank-one updates (P <- P H_t = P - beta (P w) w^T, 2 d^2 per step, one
// pass over P), with its trace read at the grid lengths up to N; and the
// step sums of the mean step, by bucket. The product is H_{j+1} ... H_{j+n},
// the transpose of H_{j+n} ... H_{j+1} (each H_t is symmetric): the same
// trace.
func (r *routeAcc) addPaTH(route []nativeeval.LayerRoute) {
	idx := r.lengthIndex()
	parts := make([]*routePart, r.layers*r.H)
	native.ParallelFor(len(parts), 0, func(k int) {
		parts[k] = r.pathHead(route[k/r.H], k%r.H, idx)
	})
	nl, G, dd := len(r.lengths), len(r.grid), r.d*r.d
	for u, pt := range parts {
		for b := 0; b < nl; b++ {
			for g := 0; g < G; g++ {
				r.sum[b][g*r.units+u] += pt.sum[b*G+g]
				if u == 0 {
					r.cnt[b][g] += pt.cnt[b*G+g]
				}
			}
			for i := 0; i < dd; i++ {
				r.phi[b][u*dd+i] += pt.phi[b*dd+i]
			}
		}
	}
	for _, e := range idx {
		r.tokens[e]++
	}
}

// pathHead is one (layer, head)'s PaTH route sums over a window.
func (r *routeAcc) pathHead(lr nativeeval.LayerRoute, h int, idx []uint8) *routePart {
	L, d, G, nl := len(idx), r.d, len(r.grid), len(r.lengths)
	pt := &routePart{sum: make([]float64, nl*G), cnt: make([]int64, nl*G), phi: make([]float64, nl*d*d)}
	w := make([]float64, d)
	step := func(t int) float64 { // w <- w_t; returns beta_t
		for c, x := range lr.W[(h*L+t)*d : (h*L+t+1)*d] {
			w[c] = float64(x)
		}
		return float64(lr.Beta[h*L+t])
	}
	for t := 0; t < L; t++ {
		beta := step(t)
		S := pt.phi[int(idx[t])*d*d:]
		for a := 0; a < d; a++ {
			bw := beta * w[a]
			row := S[a*d : a*d+d]
			for c := a; c < d; c++ { // upper triangle; mirrored in result()
				row[c] += bw * w[c]
			}
		}
	}
	P := make([]float64, d*d)
	for _, N := range pathLevels {
		for j := 0; j < L-1; j += N {
			clear(P)
			for a := 0; a < d; a++ {
				P[a*d+a] = 1
			}
			g := 0
			for t := routeStart(j) + 1; t < L && t-j <= N; t++ {
				beta := step(t)
				for a := 0; a < d; a++ { // P <- P H_t: row -= beta (row . w) w
					row := P[a*d : a*d+d]
					row = row[:len(w)]
					var v float64
					for c, x := range w {
						v += row[c] * x
					}
					v *= beta
					for c, x := range w {
						row[c] -= v * x
					}
				}
				n := t - j
				for g < G && r.grid[g] < n {
					g++
				}
				if g < G && r.grid[g] == n {
					var tr float64
					for a := 0; a < d; a++ {
						tr += P[a*d+a]
					}
					b := int(idx[t])
					pt.sum[b*G+g] += tr / float64(d)
					pt.cnt[b*G+g]++
				}
			}
		}
	}
	return pt
}

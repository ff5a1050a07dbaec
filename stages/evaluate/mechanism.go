package evaluate

import (
	"fmt"
	"math"

	"routebench/model/nativeeval"
)

// The mechanism probe's summaries (issue 39; docs/statistics.md, claims
// v4m): at every length L, in each of the length's windows (the primary
// protocol's first Windows; under DesignPrefixes the long windows' length-L
// prefixes), ProbeQueries query positions spread over the last T
// positions, whose exact attention rows nativeeval's probe summarises by
// log2-distance bin. Far means beyond T (i - j > T), as the v3 far mass.

// maxProbeOutErr bounds the relative difference between a probe row's
// output and the streaming attention's: float32 rounding gives ~1e-5; a
// row that misses by a percent is not the model's row, and the stage
// fails rather than report it.
const maxProbeOutErr = 1e-2

// Mechanism is eval.json's "mechanism" (format 4).
type Mechanism struct {
	Queries int `json:"queries"` // probe queries per window and length
	Far     int `json:"far"`     // far sources: i - j > Far (T)
	// Lengths are the primary lengths in order.
	Lengths []MechanismLength `json:"lengths"`
}

// MechanismLength is one length's probe summary.
type MechanismLength struct {
	L int `json:"length"`
	// Per window: the mean over layers, heads and probe queries (the v4m
	// claims' (seed, window) values). FarCoherence averages the rows with
	// far mass; both are empty at T, whose queries see nothing that far.
	FarMass      []float64 `json:"far_mass,omitempty"`
	FarCoherence []float64 `json:"far_coherence,omitempty"`
	// FarCoherenceWeighted weighs each row's far coherence by its far
	// mass, sum rho_r c_r / sum rho_r (claim v4m2's M2'): a row with 1e-6
	// far mass sums almost no far value, so its coherence says little
	// about what the query reads, where FarCoherence counts it fully.
	FarCoherenceWeighted []float64 `json:"far_coherence_weighted,omitempty"`
	Bound                []float64 `json:"bound,omitempty"`
	// BoundHeld counts the rows (window, layer, head, query) whose far mass
	// is at least the bound; an identity: BoundRows minus it is a bug.
	BoundHeld int `json:"bound_held"`
	BoundRows int `json:"bound_rows"`
	// MaxOutErr is the largest relative difference between a row's output
	// and the streaming attention's (the check that the rows are the
	// model's).
	MaxOutErr float64 `json:"max_out_err"`
	// Heads are the per-(layer, head) figures averaged over windows and
	// probe queries.
	Heads []MechanismHead `json:"heads"`
}

// MechanismHead is one (layer, head)'s figures at one length.
type MechanismHead struct {
	Layer        int            `json:"layer"`
	Head         int            `json:"head"`
	FarMass      float64        `json:"far_mass"`
	FarCoherence float64        `json:"far_coherence"` // over rows with far mass
	Bound        float64        `json:"bound"`
	Lambda       float64        `json:"lambda"` // half the logit range
	Entropy      float64        `json:"entropy"`
	Bins         []MechanismBin `json:"bins"`
}

// MechanismBin is one log2-distance bin averaged over the rows that have
// sources in it: distances [Lo, Hi].
type MechanismBin struct {
	Lo   int     `json:"lo"`
	Hi   int     `json:"hi"`
	Rows int     `json:"rows"`
	Mass float64 `json:"mass"`
	// Uniform is the mass uniform attention would put in the bin, the
	// mean of sources / (query + 1): Mass / Uniform is the attention per
	// source relative to uniform.
	Uniform   float64 `json:"uniform"`
	LogitMean float64 `json:"logit_mean"`
	LogitSD   float64 `json:"logit_sd"`
	Coherence float64 `json:"coherence"` // over rows with mass in the bin
}

// probeQueries are the probe's query positions at length L: ProbeQueries
// positions evenly over [L - T, L) (all of [0, T) at T).
func (c Config) probeQueries(L int) []int {
	n, T := c.ProbeQueries, c.Context
	if n <= 0 || c.RopeScaling != "" {
		return nil
	}
	n = min(n, T)
	q := make([]int, n)
	for k := range q {
		q[k] = L - T + (2*k+1)*T/(2*n)
	}
	return q
}

// newProbeSums is an empty collector, or nil when the probe is off.
func (c Config) newProbeSums() *probeSums {
	if len(c.probeQueries(c.Context)) == 0 {
		return nil
	}
	return &probeSums{}
}

// probeSums collects one length's rows window by window.
type probeSums struct {
	windows [][]nativeeval.ProbeRow
}

func (p *probeSums) add(rows []nativeeval.ProbeRow) { p.windows = append(p.windows, rows) }

// summarize turns one length's rows into its MechanismLength.
func (p *probeSums) summarize(L, far int) (MechanismLength, error) {
	ml := MechanismLength{L: L}
	type headAcc struct {
		rows, farRows                int
		far, coh, bound, lambda, ent float64
		mass, uni, lm, lsd, bcoh     []float64
		binRows, cohRows             []int
	}
	heads := map[[2]int]*headAcc{}
	var order [][2]int
	nb := nativeeval.ProbeBins(L)
	for w, rows := range p.windows {
		var fm, fc, bd, wc float64
		var n, nc int
		for _, r := range rows {
			if r.OutErr > maxProbeOutErr || math.IsNaN(r.OutErr) {
				return ml, fmt.Errorf("mechanism probe at length %d, window %d, layer %d, head %d, query %d: the exact row's output is %.3g (relative) off the streaming attention's; the probe does not compute this model's attention (a bug: run go test ./model/nativeeval -run Probe)", L, w, r.Layer, r.Head, r.Query, r.OutErr)
			}
			ml.MaxOutErr = math.Max(ml.MaxOutErr, r.OutErr)
			ml.BoundRows++
			if r.FarMass >= r.Bound-1e-9 {
				ml.BoundHeld++
			}
			k := [2]int{r.Layer, r.Head}
			h := heads[k]
			if h == nil {
				h = &headAcc{mass: make([]float64, nb), uni: make([]float64, nb), lm: make([]float64, nb), lsd: make([]float64, nb), bcoh: make([]float64, nb), binRows: make([]int, nb), cohRows: make([]int, nb)}
				heads[k] = h
				order = append(order, k)
			}
			h.rows++
			h.far += r.FarMass
			h.bound += r.Bound
			h.lambda += r.Lambda
			h.ent += r.Entropy
			fm += r.FarMass
			bd += r.Bound
			n++
			if r.FarMass > 0 {
				h.farRows++
				h.coh += r.FarCoherence
				fc += r.FarCoherence
				wc += r.FarMass * r.FarCoherence
				nc++
			}
			for b, s := range r.Bins {
				if s.Sources == 0 || b >= nb {
					continue
				}
				h.binRows[b]++
				h.mass[b] += s.Mass
				h.uni[b] += float64(s.Sources) / float64(r.Query+1)
				h.lm[b] += s.LogitMean
				h.lsd[b] += s.LogitSD
				if s.Mass > 0 {
					h.cohRows[b]++
					h.bcoh[b] += s.Coherence
				}
			}
		}
		if n == 0 {
			continue
		}
		if nc > 0 {
			ml.FarMass = append(ml.FarMass, fm/float64(n))
			ml.FarCoherence = append(ml.FarCoherence, fc/float64(nc))
			ml.FarCoherenceWeighted = append(ml.FarCoherenceWeighted, wc/fm) // fm > 0: nc > 0 rows have far mass
			ml.Bound = append(ml.Bound, bd/float64(n))
		}
	}
	for _, k := range order {
		h := heads[k]
		n := float64(h.rows)
		mh := MechanismHead{Layer: k[0], Head: k[1], FarMass: h.far / n, Bound: h.bound / n, Lambda: h.lambda / n, Entropy: h.ent / n}
		if h.farRows > 0 {
			mh.FarCoherence = h.coh / float64(h.farRows)
		}
		for b := 0; b < nb; b++ {
			if h.binRows[b] == 0 {
				continue
			}
			lo, hi := 0, 0
			if b > 0 {
				lo, hi = 1<<(b-1), 1<<b-1
			}
			r := float64(h.binRows[b])
			mb := MechanismBin{Lo: lo, Hi: hi, Rows: h.binRows[b], Mass: h.mass[b] / r, Uniform: h.uni[b] / r, LogitMean: h.lm[b] / r, LogitSD: h.lsd[b] / r}
			if h.cohRows[b] > 0 {
				mb.Coherence = h.bcoh[b] / float64(h.cohRows[b])
			}
			mh.Bins = append(mh.Bins, mb)
		}
		ml.Heads = append(ml.Heads, mh)
	}
	return ml, nil
}

// splitProbe returns the rows of one length's queries out of a pass that
// probed every length's queries at once (DesignPrefixes).
func splitProbe(rows []nativeeval.ProbeRow, queries []int) []nativeeval.ProbeRow {
	in := map[int]bool{}
	for _, q := range queries {
		in[q] = true
	}
	var out []nativeeval.ProbeRow
	for _, r := range rows {
		if in[r.Query] {
			out = append(out, r)
		}
	}
	return out
}

// Package ci is the regression gate CI runs: it compares a profile's perplexity
// ratios, theory verdicts and claim verdicts with a committed baseline file and reports
// every difference beyond the stated tolerance as a readable diff.
//
// Training and evaluation are deterministic (fixed seeds, bit-identical
// weights), so the tolerance is tight: RelTolerance (1e-4) on each PPL and
// ratio. It is not zero because the native evaluator's float32 reductions
// may take a different (vector vs portable) kernel on another CPU (~1e-6).
// The smoke variants differ from each other by 1-6% in PPL, so a
// deliberate change to one moves its numbers far past the tolerance. The baseline is updated
// only by an explicit command (`make baseline`), never automatically.
package ci

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"

	"routebench/stages/evaluate"
	"routebench/stages/report"
)

// RelTolerance is the largest relative difference the gate accepts.
const RelTolerance = 1e-4

// Baseline is the committed reference (ci/baseline-<profile>.json).
type Baseline struct {
	Profile      string                        `json:"profile"`
	RelTolerance float64                       `json:"rel_tolerance"`
	PPL          map[string]map[string]float64 `json:"ppl"`   // variant -> length -> PPL
	Ratio        map[string]map[string]float64 `json:"ratio"` // variant -> length -> PPL(L)/PPL(T)
	Theory       map[string]string             `json:"theory"`
	Claims       map[string]string             `json:"claims"` // claim id -> verdict (report.Claims)
}

// Collect builds a baseline from evaluation results and theory verdicts;
// the claims' verdicts are judged from the results as the report judges them.
func Collect(profile string, evals map[string]*evaluate.Result, theory map[string]string) *Baseline {
	b := &Baseline{Profile: profile, RelTolerance: RelTolerance, PPL: map[string]map[string]float64{},
		Ratio: map[string]map[string]float64{}, Theory: theory, Claims: map[string]string{}}
	for _, c := range report.Claims(evals) {
		b.Claims[c.ID] = c.Verdict
	}
	for v, r := range evals {
		b.PPL[v], b.Ratio[v] = map[string]float64{}, map[string]float64{}
		for _, l := range r.Lengths {
			k := strconv.Itoa(l.L)
			b.PPL[v][k] = l.PPL.Value
			b.Ratio[v][k] = l.Ratio.Value
		}
	}
	return b
}

// Load reads a baseline file.
func Load(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gate: %w (create it with `make baseline`)", err)
	}
	var b Baseline
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("gate: %s is not a baseline file: %w", path, err)
	}
	return &b, nil
}

// Save writes a baseline file canonically (sorted keys, one value a line).
func (b *Baseline) Save(path string) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Compare returns one line per difference between the baseline and the
// current results, at the baseline's tolerance; none means the gate passes.
func Compare(base, cur *Baseline) []string {
	return CompareWithin(base, cur, base.RelTolerance)
}

// CompareWithin is Compare at relative tolerance tol (<= 0: RelTolerance).
// A looser tolerance is for results that are not meant to be bit-identical
// to the baseline, such as a run on another backend (the GPU's float32 or
// TF32 rounding against the CPU's).
func CompareWithin(base, cur *Baseline, tol float64) []string {
	if tol <= 0 {
		tol = RelTolerance
	}
	var diffs []string
	if base.Profile != cur.Profile {
		diffs = append(diffs, fmt.Sprintf("profile: baseline %q, current %q", base.Profile, cur.Profile))
	}
	diffs = append(diffs, compareValues("ppl", base.PPL, cur.PPL, tol)...)
	diffs = append(diffs, compareValues("ratio", base.Ratio, cur.Ratio, tol)...)
	diffs = append(diffs, compareVerdicts("theory", base.Theory, cur.Theory)...)
	diffs = append(diffs, compareVerdicts("claim", base.Claims, cur.Claims)...)
	return diffs
}

// compareVerdicts lists the verdicts that differ; they must match exactly.
func compareVerdicts(what string, base, cur map[string]string) []string {
	var diffs []string
	for _, name := range sortedKeys(base, cur) {
		if b, c := base[name], cur[name]; b != c {
			diffs = append(diffs, fmt.Sprintf("%s %s: baseline %s, current %s", what, name, orMissing(b), orMissing(c)))
		}
	}
	return diffs
}

func compareValues(what string, base, cur map[string]map[string]float64, tol float64) []string {
	var diffs []string
	for _, v := range sortedKeys(base, cur) {
		b, c := base[v], cur[v]
		lens := sortedKeys(b, c)
		sort.Slice(lens, func(i, j int) bool { x, _ := strconv.Atoi(lens[i]); y, _ := strconv.Atoi(lens[j]); return x < y })
		for _, l := range lens {
			bv, bok := b[l]
			cv, cok := c[l]
			switch {
			case !bok:
				diffs = append(diffs, fmt.Sprintf("%s %s L=%s: not in the baseline (current %.6g)", what, v, l, cv))
			case !cok:
				diffs = append(diffs, fmt.Sprintf("%s %s L=%s: missing (baseline %.6g)", what, v, l, bv))
			case math.IsNaN(cv) || math.Abs(cv-bv) > tol*math.Abs(bv):
				diffs = append(diffs, fmt.Sprintf("%s %s L=%s: baseline %.6g, current %.6g (%+.3f%%, tolerance %.3g%%)", what, v, l, bv, cv, 100*(cv/bv-1), 100*tol))
			}
		}
	}
	return diffs
}

// Largest is the value that differs most, relatively, between a baseline
// and current results.
type Largest struct {
	What, Variant, Length string  // "ppl" or "ratio", variant name, length in tokens
	Base, Current, Rel    float64 // Rel = |current/base - 1|
}

func (l Largest) String() string {
	if l.What == "" {
		return "no value in common"
	}
	return fmt.Sprintf("%.3g (%s %s L=%s: baseline %.6g, current %.6g)", l.Rel, l.What, l.Variant, l.Length, l.Base, l.Current)
}

// LargestDifference finds the value present in both that differs most;
// the zero Largest when they share none. It tells how close two runs
// agree even when the gate passes (or how far off when it fails).
func LargestDifference(base, cur *Baseline) Largest {
	var best Largest
	for _, set := range []struct {
		what      string
		base, cur map[string]map[string]float64
	}{{"ppl", base.PPL, cur.PPL}, {"ratio", base.Ratio, cur.Ratio}} {
		for _, v := range sortedKeys(set.base, set.cur) {
			for _, l := range sortedKeys(set.base[v], set.cur[v]) {
				bv, bok := set.base[v][l]
				cv, cok := set.cur[v][l]
				if !bok || !cok || bv == 0 {
					continue
				}
				rel := math.Abs(cv/bv - 1)
				if math.IsNaN(cv) {
					rel = math.Inf(1)
				}
				if best.What == "" || rel > best.Rel {
					best = Largest{What: set.what, Variant: v, Length: l, Base: bv, Current: cv, Rel: rel}
				}
			}
		}
	}
	return best
}

func orMissing(s string) string {
	if s == "" {
		return "(missing)"
	}
	return s
}

func sortedKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]V{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

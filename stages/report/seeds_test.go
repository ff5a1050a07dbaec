package report

import (
	"math"
	"strings"
	"testing"

	"routebench/stages/evaluate"
	"routebench/stats"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// CombineSeeds puts the geometric seed mean and its log-scale t-interval
// (GeoOverSeeds, checked by hand above) where the bootstrap
// interval was, averages the far mass and bucket losses, keeps one run as
// it is, and refuses runs of different lengths.
func TestCombineSeeds(t *testing.T) {
	mk := func(r128, far float64) *evaluate.Result {
		r := madeResult("random-qk", at(iv(1.1, 1, 1.2), iv(r128, r128-0.1, r128+0.1)), map[int]float64{128: far})
		r.Lengths[2].Buckets = []evaluate.Bucket{{Start: 0, End: 128, Loss: far * 10}}
		r.Lengths[2].WindowLoss = []float64{1, 2}
		r.Lengths[2].PrefixRatio = &stats.Interval{Value: r128, Lo: r128 - 0.2, Hi: r128 + 0.2}
		r.Lengths[2].PrefixLoss = []float64{1, 1}
		return r
	}
	runs := []*evaluate.Result{mk(1.2, 0.5), mk(1.4, 0.7), mk(1.3, 0.6)}
	c, err := CombineSeeds(runs)
	if err != nil {
		t.Fatal(err)
	}
	l := c.Lengths[2]
	// logs of 1.2, 1.4, 1.3 with t(2) 4.302653 (computed apart, in Python):
	// 1.29743 [1.07130, 1.57129].
	if !near(l.Ratio.Value, math.Cbrt(1.2*1.4*1.3)) || math.Abs(l.Ratio.Lo-1.07130) > 1e-5 || math.Abs(l.Ratio.Hi-1.57129) > 1e-5 {
		t.Errorf("combined ratio at 128T %v, want 1.29743 [1.07130, 1.57129]", l.Ratio)
	}
	// The prefix ratio combines as the paper ratio does (same per-seed values here).
	if l.PrefixRatio == nil || !near(l.PrefixRatio.Value, l.Ratio.Value) || math.Abs(l.PrefixRatio.Lo-1.07130) > 1e-5 || math.Abs(l.PrefixRatio.Hi-1.57129) > 1e-5 || l.PrefixLoss != nil {
		t.Errorf("combined prefix ratio %v (prefix losses %v), want 1.29743 [1.07130, 1.57129] and none", l.PrefixRatio, l.PrefixLoss)
	}
	if c.Lengths[0].PrefixRatio != nil {
		t.Errorf("a length without prefix ratios combined to %v", c.Lengths[0].PrefixRatio)
	}
	if f, _ := farAt(l.FarMass, 128); !near(f.Mean, 0.6) || !near(l.Buckets[0].Loss, 6) || l.WindowLoss != nil {
		t.Errorf("combined far mass %v, bucket loss %v, window losses %v; want 0.6, 6 and none", f.Mean, l.Buckets[0].Loss, l.WindowLoss)
	}
	if runs[0].Lengths[2].Ratio.Value != 1.2 || runs[0].Lengths[2].Buckets[0].Loss != 5 {
		t.Error("CombineSeeds modified its input")
	}
	if one, _ := CombineSeeds(runs[:1]); one != runs[0] {
		t.Error("one run is not returned as it is")
	}
	short := madeResult("random-qk", at(iv(1, 1, 1), iv(1, 1, 1)), nil)
	short.Lengths = short.Lengths[:2]
	if _, err := CombineSeeds([]*evaluate.Result{runs[0], short}); err == nil || !strings.Contains(err.Error(), "different lengths") {
		t.Errorf("runs of different lengths: %v", err)
	}
}

// valueTransport is the value-transport claim over seeds, with random-qkv's
// and random-qk's ratios at 128T per seed (each run's bootstrap interval
// +- 0.01).
func valueTransport(t *testing.T, qkv, qk []float64) Claim {
	t.Helper()
	var perSeed []map[string]*evaluate.Result
	var seeds []uint64
	for i := range qkv {
		perSeed = append(perSeed, map[string]*evaluate.Result{
			"random-qkv": madeResult("random-qkv", at(iv(1, 1, 1), iv(qkv[i], qkv[i]-0.01, qkv[i]+0.01)), nil),
			"random-qk":  madeResult("random-qk", at(iv(1, 1, 1), iv(qk[i], qk[i]-0.01, qk[i]+0.01)), nil),
		})
		seeds = append(seeds, uint64(i+1))
	}
	claims, err := ClaimsOverSeeds(perSeed, seeds)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range claims {
		if c.ID == "value-transport" {
			return c
		}
	}
	t.Fatal("no value-transport claim")
	return Claim{}
}

// The verdict is the criterion on the seed means with t-intervals, and the
// evidence counts the seeds that reproduce it alone.
func TestClaimsOverSeeds(t *testing.T) {
	// Geometric seed means: qkv 1.110 [1.085, 1.135], qk 1.299 [1.181, 1.430]: disjoint.
	// Seed 3 alone: qkv 1.11 [1.10, 1.12] vs qk 1.25 [1.24, 1.26]: reproduced too;
	// seed 2 alone: qkv 1.12 [1.11, 1.13] vs qk 1.35: reproduced.
	c := valueTransport(t, []float64{1.10, 1.12, 1.11}, []float64{1.30, 1.35, 1.25})
	if c.Verdict != "REPRODUCED" || !strings.Contains(c.Evidence, "3 of 3 seeds") || !strings.Contains(c.Criterion, "over 3 seeds") {
		t.Errorf("clear effect: %s, %q, %q", c.Verdict, c.Criterion, c.Evidence)
	}
	if !strings.Contains(c.Evidence, "1.110 [1.085, 1.135]") || !strings.Contains(c.Evidence, "1.299 [1.181, 1.430]") {
		t.Errorf("evidence does not quote the seed means with their t-intervals: %q", c.Evidence)
	}
	// qk scatters: 1.30, 1.16, 1.44 -> geometric mean 1.295, log-scale t-interval [0.990, 1.694],
	// which overlaps qkv's although every seed alone reproduces the claim.
	c = valueTransport(t, []float64{1.10, 1.12, 1.11}, []float64{1.30, 1.16, 1.44})
	if c.Verdict != "NOT REPRODUCED" || !strings.Contains(c.Evidence, "3 of 3 seeds") {
		t.Errorf("scattered seeds: %s, %q", c.Verdict, c.Evidence)
	}
	// One seed against the effect: 2 of 3, and the means still overlap.
	c = valueTransport(t, []float64{1.10, 1.40, 1.11}, []float64{1.30, 1.35, 1.25})
	if c.Verdict != "NOT REPRODUCED" || !strings.Contains(c.Evidence, "2 of 3 seeds") || !strings.Contains(c.Evidence, "seed 2 NOT REPRODUCED") {
		t.Errorf("one seed against: %s, %q", c.Verdict, c.Evidence)
	}
	// One seed: exactly Claims.
	one := valueTransport(t, []float64{1.10}, []float64{1.30})
	plain := verdictOf(t, map[string]*evaluate.Result{
		"random-qkv": madeResult("random-qkv", at(iv(1, 1, 1), iv(1.10, 1.09, 1.11)), nil),
		"random-qk":  madeResult("random-qk", at(iv(1, 1, 1), iv(1.30, 1.29, 1.31)), nil),
	}, "rotating values")
	if one != plain {
		t.Errorf("one seed: %+v, Claims gives %+v", one, plain)
	}
}

func TestSeedSuffix(t *testing.T) {
	if SeedSuffix(1, 1) != "" || SeedSuffix(2, 1) != "@seed2" || RunName("rope", 3, 1) != "rope@seed3" || RunName("rope", 1, 1) != "rope" {
		t.Fatal("run names: the profile's seed is unsuffixed, others @seed<N>")
	}
}

package slurm

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// kindConcurrency bounds, from a submission's sbatch calls, how many tasks
// of each kind can run at once: jobs chained by afterany on the kind's job
// before them run one after another (the chain's bound is its largest
// job's), separate chains add up. A job's own bound is its array's
// throttle, else its task count, else 1.
func kindConcurrency(t *testing.T, calls []string, res *Submitted) map[string]int {
	t.Helper()
	kindOf := map[string]string{} // job id -> kind
	for stage, ref := range res.New {
		id, _, _ := strings.Cut(ref, "_")
		kindOf[id], _, _ = strings.Cut(stage, "/")
	}
	bound := map[string]int{}
	chainMax := map[string]int{} // kind -> the bound of its current chain
	last := map[string]string{}  // kind -> its previous job
	for i, c := range calls {
		id := strconv.Itoa(100 + i) // the fake sbatch's ids, in call order
		kind := kindOf[id]
		most := 1
		if spec := sbatchArg(c, "--array"); spec != "" {
			if _, th, ok := strings.Cut(spec, "%"); ok {
				most, _ = strconv.Atoi(th)
			} else {
				most = 0
				for _, r := range strings.Split(spec, ",") {
					lo, hi, isRange := strings.Cut(r, "-")
					l, _ := strconv.Atoi(lo)
					h := l
					if isRange {
						h, _ = strconv.Atoi(hi)
					}
					most += h - l + 1
				}
			}
		}
		chained := last[kind] != "" && strings.Contains(sbatchArg(c, "--dependency"), "afterany:"+last[kind])
		if !chained {
			bound[kind] += chainMax[kind] // close the previous chain
			chainMax[kind] = 0
		}
		chainMax[kind] = max(chainMax[kind], most)
		last[kind] = id
	}
	for k, m := range chainMax {
		bound[k] += m
	}
	return bound
}

// array_throttle_total caps a kind's running tasks across the arrays a
// submission splits it into (here array_max 2 splits three trains into an
// array and a job, and the evaluates into arrays that line up with them
// and one that does not). The control: array_throttle alone bounds each
// array, and the kind's total exceeds it.
func TestArrayThrottleTotal(t *testing.T) {
	for _, tc := range []struct {
		site      Site
		wantBound bool // every kind within 2
	}{
		{Site{ArrayThrottle: 2, ArrayMax: 2}, false},
		{Site{ArrayThrottleTotal: 2, ArrayMax: 2}, true},
		{Site{ArrayThrottle: 5, ArrayThrottleTotal: 2, ArrayMax: 2}, true},
	} {
		f := newFakeSlurm(t)
		var sleeps []time.Duration
		s := newSubmitter(t, &sleeps)
		s.Site = &tc.site
		res, err := s.Submit(sweepPlan())
		if err != nil {
			t.Fatal(err)
		}
		calls := f.calls(t, "sbatch")
		bound := kindConcurrency(t, calls, res)
		within := bound["train"] <= 2 && bound["evaluate"] <= 2
		if within != tc.wantBound {
			t.Errorf("site %+v: at most %d train and %d evaluate tasks at once (within 2: %v, want %v)\n%s", tc.site, bound["train"], bound["evaluate"], within, tc.wantBound, strings.Join(calls, "\n"))
		}
		if tc.site.ArrayThrottleTotal > 0 {
			for _, c := range calls {
				if spec := sbatchArg(c, "--array"); spec != "" && !strings.HasSuffix(spec, "%2") {
					t.Errorf("site %+v: an array without the total as its throttle: --array=%s", tc.site, spec)
				}
			}
		}
	}
}

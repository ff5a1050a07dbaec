package report

import (
	"math"
	"testing"

	"routebench/stages/evaluate"
	"routebench/stats"
)

// Edges from stats/testdata/reference.py (python3 stdlib): three seeds at
// x e^-0.01, x, x e^0.01 have a log-scale t upper end x * 1.02515...; so
// "flat" (upper <= 1.10) holds for a <= 1.07301109385, "beats" (paired
// upper < 1) for a mean log difference c < -0.0248413771175, and "keeps
// the PPL at T" (paired upper <= 1.03) for c <= 0.00471742512404.
const (
	refFlatEdge  = 1.07301109385
	refBeatsEdge = -0.0248413771175
	refKeepEdge  = 0.00471742512404
	refUpper1072 = 1.09896347462 // the upper end at a = 1.072
)

var seedSteps = []float64{-0.01, 0, 0.01}

// v2Run is one seed's result at T = 128: at each multiplier every window
// (4 of them) has prefix loss 2 and loss 2 + logPrefix[m] (so its prefix
// ratio is exp(logPrefix[m])); at T the window losses are atT (or 2);
// far mass beyond T per multiplier.
func v2Run(variant string, logPrefix map[int]float64, atT []float64, far map[int]float64) *evaluate.Result {
	const T, W = 128, 4
	r := &evaluate.Result{Format: evaluate.FormatVersion, Variant: variant, Source: "test", Protocol: evaluate.Config{Variant: variant, Context: T, Seed: 7}}
	for _, m := range []int{1, 2, 16, 128} {
		l := evaluate.LengthResult{L: m * T, Multiplier: m}
		for w := 0; w < W; w++ {
			l.PrefixLoss = append(l.PrefixLoss, 2)
			loss := 2 + logPrefix[m]
			if m == 1 {
				loss = 2
				if atT != nil {
					loss = atT[w]
				}
				l.PrefixLoss[w] = loss
			}
			l.WindowLoss = append(l.WindowLoss, loss)
		}
		p := stats.Interval{Value: math.Exp(logPrefix[m]), Lo: math.Exp(logPrefix[m]) - 0.05, Hi: math.Exp(logPrefix[m]) + 0.05}
		if m == 1 {
			p = stats.Interval{Value: 1, Lo: 1, Hi: 1}
		}
		l.PrefixRatio = &p
		l.Ratio = p
		l.PPL = stats.Interval{Value: math.Exp(stats.Mean(l.WindowLoss))}
		if f, ok := far[m]; ok {
			l.FarMass = []evaluate.FarMass{{Distance: T, Heads: 8, Mean: f}}
		}
		r.Lengths = append(r.Lengths, l)
	}
	return r
}

// threeSeeds builds the seeds' results of several variants; mk(v, s)
// returns variant v's result at seed s (0, 1, 2).
func threeSeeds(vs []string, mk func(v string, s int) *evaluate.Result) []map[string]*evaluate.Result {
	out := make([]map[string]*evaluate.Result, 3)
	for s := range out {
		out[s] = map[string]*evaluate.Result{}
		for _, v := range vs {
			out[s][v] = mk(v, s)
		}
	}
	return out
}

func v2Claim(t *testing.T, perSeed []map[string]*evaluate.Result, id string) Claim {
	t.Helper()
	cs, err := ClaimsOverSeeds(perSeed, []uint64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.ID == id+V2Suffix {
			return c
		}
	}
	t.Fatalf("no claim %s%s", id, V2Suffix)
	return Claim{}
}

func flatAt(a float64) map[int]float64 {
	return map[int]float64{2: math.Log(a), 16: math.Log(a), 128: math.Log(a)}
}

func TestV2FlatIsOneSidedAtItsEdge(t *testing.T) {
	for _, tc := range []struct {
		a    float64
		want string
	}{{1.072, "REPRODUCED"}, {1.074, "NOT REPRODUCED"}, {0.80, "REPRODUCED"}} {
		ps := threeSeeds([]string{"alibi"}, func(v string, s int) *evaluate.Result {
			return v2Run(v, flatAt(tc.a*math.Exp(seedSteps[s])), nil, nil)
		})
		c := v2Claim(t, ps, "alibi-flat")
		if c.Verdict != tc.want {
			t.Errorf("alibi at %.3f (edge %.6f): %s, want %s (%s)", tc.a, refFlatEdge, c.Verdict, tc.want, c.Evidence)
		}
		if tc.a == 1.072 && math.Abs(c.Effect.Hi-refUpper1072) > 1e-9 {
			t.Errorf("upper end %.12g, reference %.12g", c.Effect.Hi, refUpper1072)
		}
		if c.SeedsAlone == "" || c.Ratios == "" || c.Power == "" {
			t.Errorf("row lacks seeds alone / ratios / power: %+v", c)
		}
	}
}

func TestV2LearnedJudgedAtTheLongestLength(t *testing.T) {
	for _, tc := range []struct {
		at128 float64
		want  string
	}{{1.072, "REPRODUCED"}, {1.074, "NOT REPRODUCED"}} {
		ps := threeSeeds([]string{"learned-qk", "learned-qkv"}, func(v string, s int) *evaluate.Result {
			lp := flatAt(1.0 * math.Exp(seedSteps[s]))
			if v == "learned-qkv" {
				lp[128] = math.Log(tc.at128) + seedSteps[s]
			}
			return v2Run(v, lp, nil, nil)
		})
		if c := v2Claim(t, ps, "learned-flat"); c.Verdict != tc.want {
			t.Errorf("learned-qkv at 128T %.3f (16T flat): %s, want %s (%s)", tc.at128, c.Verdict, tc.want, c.Evidence)
		}
	}
}

// "A beats B": per-seed paired means c-0.01, c, c+0.01 of A's log prefix
// ratio minus B's; B's prefix ratio is 1.3 on every window.
func TestV2BeatsIsPairedAtItsEdge(t *testing.T) {
	for _, tc := range []struct {
		c    float64
		want string
	}{{-0.0252, "REPRODUCED"}, {-0.0245, "NOT REPRODUCED"}} {
		ps := threeSeeds([]string{"random-qkv", "random-qk"}, func(v string, s int) *evaluate.Result {
			lp := map[int]float64{2: math.Log(1.3), 16: math.Log(1.3), 128: math.Log(1.3)}
			if v == "random-qkv" {
				lp[128] += tc.c + seedSteps[s]
			}
			return v2Run(v, lp, nil, nil)
		})
		c := v2Claim(t, ps, "value-transport")
		if c.Verdict != tc.want {
			t.Errorf("paired mean %.4f (edge %.6f): %s, want %s (%s)", tc.c, refBeatsEdge, c.Verdict, tc.want, c.Evidence)
		}
	}
}

// Keeping the PPL at T: the controlled variant's per-window losses at T
// are the base's + c + the seed's step, so the paired PPL ratio's upper
// end sits either side of 1.03; its prefix ratio is flat.
func TestV2ControlKeepsPPLAtItsEdge(t *testing.T) {
	for _, tc := range []struct {
		c    float64
		want string
	}{{0.0045, "REPRODUCED"}, {0.0050, "NOT REPRODUCED"}} {
		ps := threeSeeds([]string{"random-qkv-alibi", "random-qkv"}, func(v string, s int) *evaluate.Result {
			atT := []float64{2.1, 1.9, 2.3, 2.0}
			if v == "random-qkv-alibi" {
				for w := range atT {
					atT[w] += tc.c + seedSteps[s]
				}
			}
			return v2Run(v, flatAt(0.95), atT, nil)
		})
		c := v2Claim(t, ps, "rotation-far-mass-control")
		if c.Verdict != tc.want {
			t.Errorf("PPL at T offset %.4f (edge %.6f): %s, want %s (%s)", tc.c, refKeepEdge, c.Verdict, tc.want, c.Evidence)
		}
	}
}

// Rotation-only degrades only if its far mass grows more than ALiBi's.
func TestV2DegradesAgainstALiBisFarMass(t *testing.T) {
	for _, tc := range []struct {
		alibiAt128 float64
		want       string
	}{{0.29, "REPRODUCED"}, {0.31, "NOT REPRODUCED"}} {
		ps := threeSeeds([]string{"random-qk", "alibi"}, func(v string, s int) *evaluate.Result {
			if v == "alibi" {
				return v2Run(v, flatAt(0.95), nil, map[int]float64{2: 0.1, 128: tc.alibiAt128})
			}
			return v2Run(v, flatAt(1.5*math.Exp(seedSteps[s])), nil, map[int]float64{2: 0.2, 128: 0.4})
		})
		if c := v2Claim(t, ps, "rotation-only-degrades"); c.Verdict != tc.want {
			t.Errorf("alibi far mass 0.1 -> %.2f vs random-qk 0.2 -> 0.4: %s, want %s (%s)", tc.alibiAt128, c.Verdict, tc.want, c.Evidence)
		}
	}
}

// Format-1 results (no prefix losses) leave the v2 rows NOT TESTED with
// the fix; the v1 rows still judge them.
func TestV2NeedsFormat2(t *testing.T) {
	r := v2Run("alibi", flatAt(1), nil, nil)
	for i := range r.Lengths {
		r.Lengths[i].PrefixRatio, r.Lengths[i].PrefixLoss = nil, nil
	}
	cs := ClaimsV2([]map[string]*evaluate.Result{{"alibi": r}})
	if cs[2].ID != "alibi-flat-v2" || cs[2].Verdict != "NOT TESTED" || cs[2].Evidence == "" {
		t.Fatalf("format-1 alibi: %+v", cs[2])
	}
}

// With one seed the power figure reads the window t interval of the
// length it came from (4 windows here): its per-window sd is the log
// half-width x sqrt(4) / t(3), and an interval straddling its edge asks
// for the windows that detect the distance with 80% power (python, the
// reference's detectable(): x1.068 detectable, 11 windows for log 1.03).
func TestV2PowerOneSeed(t *testing.T) {
	r := v2Run("alibi", flatAt(1), nil, nil)
	h := 0.05
	s := stats.Spread{N: 1, Mean: 1.03, Lo: 1.03 * math.Exp(-h), Hi: 1.03 * math.Exp(h)}
	if got := power(s, 1, []*evaluate.Result{r}, 0); got != "detectable at 80% power with 1 seed and 4 windows: x1.068; straddles 1.00: ~11 windows at 128T (now 4) for 80% power" {
		t.Fatalf("power: %q", got)
	}
	if got := power(stats.Spread{N: 1, Mean: 0.9, Lo: 0.9 * math.Exp(-h), Hi: 0.9 * math.Exp(h)}, 1, []*evaluate.Result{r}, 0); got != "detectable at 80% power with 1 seed and 4 windows: x1.068" {
		t.Fatalf("settled interval: %q", got)
	}
}

package evaluate

import (
	"context"
	"math"
	"testing"

	"routebench/model/nativeeval"
	"routebench/modelspec"
	"routebench/modelspec/weights/weightstest"
	"routebench/pipeline"
	"routebench/stages/tokenize/shards"
)

// TestContextGainMatchesDirectPasses: every length's context gain equals
// the one computed from two separate nativeeval passes per window, the
// whole window and the short window of its last T tokens [L-T, L), under both
// window designs (the long windows' prefixes; each length's own windows,
// the first Windows of them). A short window off by one token, the same
// reference otherwise, disagrees: the comparison can fail.
func TestContextGainMatchesDirectPasses(t *testing.T) {
	ds := prefixDataset(t)
	const T, S = 16, 8
	a := modelspec.Config{Variant: "random-qk", Profile: "test", Vocab: 257, DModel: 32, Layers: 2, Heads: 2, DHidden: 48, Context: T}.Arch()
	set := weightstest.RandomSet(t, a, 7)
	m, err := nativeeval.Load(set)
	if err != nil {
		t.Fatal(err)
	}
	losses := func(tokens, targets []int32) []float64 {
		out, err := m.LogProbs(context.Background(), tokens, targets, nativeeval.Options{})
		if err != nil {
			t.Fatal(err)
		}
		l := make([]float64, len(out.LogProbs))
		for i, lp := range out.LogProbs {
			l[i] = -lp
		}
		return l
	}
	// gain is the reference: window win's mean gain and share at L with
	// the short window starting extra tokens early.
	gain := func(win []int32, L, extra int) (float64, float64) {
		long := losses(win[:L], win[1:L+1])
		a := L - T - extra
		short := losses(win[a:L], win[a+1:L+1])[T-S+extra:]
		var sum, over float64
		for k := range S {
			d := short[k] - long[L-S+k]
			sum += d
			if d > ContextGainThreshold {
				over++
			}
		}
		return sum / S, over / S
	}
	for _, design := range []string{DesignPrefixes, DesignIndependent} {
		t.Run("design="+design, func(t *testing.T) {
			cfg := NewConfig("random-qk", "test", T, []int{1, 2, 4, 8}, 4, 3)
			cfg.Design = design
			var last, total int64
			rc := &pipeline.RunContext{Context: context.Background(), Logf: t.Logf, Progress: func(d, n int64, _ string) { last, total = d, n }}
			res, done, err := evaluate(rc, cfg, set, ds)
			if err != nil {
				t.Fatal(err)
			}
			if last != total || done != total {
				t.Errorf("progress ends at %d (returned %d) of %d tokens: the total does not count the context gain's passes", last, done, total)
			}
			held, _ := ds.Tokens(shards.SplitHeldOut)
			gains := 0
			for _, lr := range res.Lengths {
				L := lr.L
				g := lr.ContextGain
				if L < 2*T {
					if g != nil {
						t.Errorf("L=%d: a context gain below 2T", L)
					}
					continue
				}
				if g == nil || g.Scored != S || g.Short != T-S || len(g.Gain) != cfg.Windows || len(g.Share) != cfg.Windows {
					t.Fatalf("L=%d: context gain %+v, want S=%d, short context %d, %d windows", L, g, S, T-S, cfg.Windows)
				}
				gains++
				var wins [][]int32
				if design == DesignPrefixes {
					for _, sp := range res.Spans {
						win := make([]int32, sp.Tokens)
						if err := held.Read(win, sp.Offset); err != nil {
							t.Fatal(err)
						}
						wins = append(wins, win)
					}
				} else if wins, err = ds.EvalWindows(cfg.Seed, L, cfg.WindowsAt(L)); err != nil {
					t.Fatal(err)
				}
				for w := range cfg.Windows {
					wantG, wantS := gain(wins[w], L, 0)
					if math.Abs(g.Gain[w]-wantG) > 1e-9 || math.Abs(g.Share[w]-wantS) > 1e-12 {
						t.Errorf("L=%d window %d: gain %.12f share %.4f, the direct passes' %.12f %.4f", L, w, g.Gain[w], g.Share[w], wantG, wantS)
					}
					if wrong, _ := gain(wins[w], L, 1); math.Abs(g.Gain[w]-wrong) <= 1e-9 {
						t.Errorf("L=%d window %d: the gain also matches a short window one token early: the comparison cannot fail", L, w)
					}
				}
			}
			if gains != 3 {
				t.Errorf("%d lengths with a context gain, want 3 (2T, 4T, 8T)", gains)
			}
			checkPositionCurve(t, res, cfg)
		})
	}
}

// checkPositionCurve: the curve is at the longest length, one row per
// window, and each row's bin means weighted by the bins' widths are the
// window's mean loss (the bins tile positions 1 .. L, each loss once).
func checkPositionCurve(t *testing.T, res *Result, cfg Config) {
	t.Helper()
	pc := res.PositionCurve
	longest := res.Lengths[len(res.Lengths)-1]
	if pc == nil || pc.L != cfg.longest() || len(pc.WindowLoss) != len(longest.WindowLoss) {
		t.Fatalf("position curve %+v: want length %d and %d windows", pc, cfg.longest(), len(longest.WindowLoss))
	}
	for w, row := range pc.WindowLoss {
		var s float64
		for b, bin := range pc.Bins {
			s += row[b] * float64(bin.End-bin.Start)
		}
		if got := s / float64(pc.L); math.Abs(got-longest.WindowLoss[w]) > 1e-9 {
			t.Errorf("window %d: the position curve averages to %.12f, the window's loss is %.12f", w, got, longest.WindowLoss[w])
		}
	}
}

// TestPositionBins: the bins tile 1 .. L without gaps, their edges are
// floor(2^(k/4)) (each octave from 8 on split in 4), and a bin's mean is
// its positions' (a curve one position off disagrees).
func TestPositionBins(t *testing.T) {
	edges := map[int]bool{}
	for k := range 4*17 + 1 {
		edges[int(math.Floor(math.Pow(2, float64(k)/4)+1e-9))] = true
	}
	for _, L := range []int{1, 7, 256, 65536} {
		bins := PositionBins(L)
		if bins[0].Start != 1 || bins[len(bins)-1].End != L+1 {
			t.Errorf("L=%d: bins %v do not cover 1 .. L", L, bins)
		}
		for i, b := range bins {
			if b.End <= b.Start || (i > 0 && b.Start != bins[i-1].End) {
				t.Errorf("L=%d: bin %d %v after %v", L, i, b, bins[max(i-1, 0)])
			}
			if b.End != L+1 && !edges[b.End] {
				t.Errorf("L=%d: bin end %d is not floor(2^(k/4))", L, b.End)
			}
		}
	}
	n := 0
	for _, b := range PositionBins(65536) {
		if b.Start >= 256 {
			n++
		}
	}
	if n != 32 {
		t.Errorf("%d bins from 256 to 65536, want 4 per octave: 32", n)
	}
	loss := make([]float64, 64)
	for i := range loss {
		loss[i] = float64(i * i)
	}
	pc, err := positionCurve([][]float64{loss}, 64)
	if err != nil {
		t.Fatal(err)
	}
	for b, bin := range pc.Bins {
		var s float64
		for p := bin.Start; p < bin.End; p++ {
			s += float64((p - 1) * (p - 1)) // position p's loss is loss[p-1]
		}
		want := s / float64(bin.End-bin.Start)
		if pc.WindowLoss[0][b] != want {
			t.Errorf("bin %v: %g, want %g", bin, pc.WindowLoss[0][b], want)
		}
		var off float64
		for p := bin.Start; p < bin.End; p++ {
			off += float64(p * p)
		}
		if pc.WindowLoss[0][b] == off/float64(bin.End-bin.Start) {
			t.Errorf("bin %v: also the mean one position later: the check cannot fail", bin)
		}
	}
	if _, err := positionCurve([][]float64{loss[:10]}, 64); err == nil {
		t.Error("a window of 10 losses binned at length 64: no error")
	}
}

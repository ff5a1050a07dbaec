package evaluate

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"

	"routebench/model/nativeeval"
	"routebench/modelspec"
	"routebench/modelspec/weights/weightstest"
	"routebench/pipeline"
	"routebench/stages/tokenize/shards"
)

// copyDataset tokenizes (bytes) a training file and four held-out
// documents of 1,200 random letters: 4,804 held-out tokens, more than the
// gaps of copyTestConfig need (2,295), so that their text never repeats.
func copyDataset(t *testing.T) *shards.Dataset {
	return letterDataset(t, 3, 4, func(int) int { return 1200 })
}

// copyTestM is the string length of the layout tests: short, so that a
// longest length of 1,024 holds 8 probes at the shortest gap.
const copyTestM = 4

// copyTestConfig: T = 16 up to 64 T = 1,024.
func copyTestConfig() Config {
	return NewConfig("random-qk", "test", 16, []int{1, 2, 4, 8, 16, 32, 64}, 2, 5)
}

func tinyModel(t *testing.T, T int) *nativeeval.Model {
	t.Helper()
	a := modelspec.Config{Variant: "random-qk", Profile: "test", Vocab: 257, DModel: 32, Layers: 2, Heads: 2, DHidden: 48, Context: T}.Arch()
	m, err := nativeeval.Load(weightstest.RandomSet(t, a, 7))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCopyPlanCPU pins the cpu profile's gaps, counts and cost that the
// package comment states.
func TestCopyPlanCPU(t *testing.T) {
	cfg := NewConfig("rope", "cpu", 512, Multipliers(), 16, 1)
	want := []copyGapPlan{{16, 8}, {64, 8}, {256, 8}, {512, 8}, {1024, 8}, {2048, 4}, {4096, 2}, {8192, 1}, {16384, 1}, {32768, 1}, {65471, 1}}
	if got := cfg.copyPlan(CopyProbeLen); !reflect.DeepEqual(got, want) {
		t.Errorf("plan %v, want %v", got, want)
	}
	if got := cfg.copyTokens(); got != 157364 {
		t.Errorf("copy tokens %d, want 157,364", got)
	}
	cfg.RopeScaling = "yarn"
	if cfg.copyPlan(CopyProbeLen) != nil || cfg.copyTokens() != 0 {
		t.Errorf("a probe under an inference-time RoPE extension")
	}
	if small := NewConfig("rope", "test", 8, []int{1, 8}, 2, 1); small.copyPlan(CopyProbeLen) != nil {
		t.Errorf("a probe at L_max = 64, where no gap of 16 fits beside two strings of 32")
	}
}

// TestCopyLayout: in every sequence the probes lie one after another
// within L_max, each string is new and free of the end-of-document id,
// its second copy equals its first, and its gap is exactly d tokens of
// held-out text, no two gaps sharing a token; two calls give the same
// bytes.
func TestCopyLayout(t *testing.T) {
	ds, cfg, m := copyDataset(t), copyTestConfig(), copyTestM
	seqs, err := copyLayout(ds, cfg, 257, m)
	if err != nil {
		t.Fatal(err)
	}
	again, err := copyLayout(ds, cfg, 257, m)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fmtSeqs(seqs))
	b, _ := json.Marshal(fmtSeqs(again))
	if !bytes.Equal(a, b) {
		t.Errorf("two layouts differ")
	}
	plan := cfg.copyPlan(m)
	if len(seqs) != len(plan) || len(plan) != 7 || plan[0] != (copyGapPlan{16, 8}) || plan[len(plan)-1] != (copyGapPlan{1024 - 2*m - 1, 1}) {
		t.Fatalf("%d sequences for the plan %v", len(seqs), plan)
	}
	held, err := ds.Tokens(shards.SplitHeldOut)
	if err != nil {
		t.Fatal(err)
	}
	n := held.Len()
	used := make([]bool, n)
	var strs [][]int32
	for k, seq := range seqs {
		d := plan[k].d
		if seq.d != d || len(seq.probes) != plan[k].probes || len(seq.tokens) != plan[k].probes*(2*m+d) || len(seq.tokens)-1 > cfg.longest() {
			t.Fatalf("gap %d: %d tokens, %d probes; the plan says %v (L_max %d)", seq.d, len(seq.tokens), len(seq.probes), plan[k], cfg.longest())
		}
		for i, p := range seq.probes {
			if p.start != i*(2*m+d) {
				t.Errorf("gap %d probe %d starts at %d, not right after the one before (%d)", d, i, p.start, i*(2*m+d))
			}
			s := seq.tokens[p.start : p.start+m]
			if !slices.Equal(s, seq.tokens[p.start+m+d:p.start+2*m+d]) {
				t.Errorf("gap %d probe %d: the second copy differs from the first", d, i)
			}
			for _, x := range s {
				if x == held.EOT() || x < 0 || x >= 257 {
					t.Errorf("gap %d probe %d: token %d in the string", d, i, x)
				}
			}
			for _, o := range strs {
				if slices.Equal(o, s) {
					t.Errorf("gap %d probe %d reuses an earlier string", d, i)
				}
			}
			strs = append(strs, s)
			for j := range d {
				pos := (p.gapAt + int64(j)) % n
				if used[pos] {
					t.Errorf("gap %d probe %d: held-out token %d is in another gap too", d, i, pos)
				}
				used[pos] = true
				if got := seq.tokens[p.start+m+j]; got != held.At(pos) {
					t.Fatalf("gap %d probe %d, gap token %d: %d, the held-out text has %d", d, i, j, got, held.At(pos))
				}
			}
		}
	}
}

// fmtSeqs is a layout in exported fields, for its JSON bytes.
func fmtSeqs(seqs []copySeq) any {
	type probe struct {
		Index, Start int
		GapAt        int64
	}
	type seq struct {
		D      int
		Tokens []int32
		Probes []probe
	}
	var out []seq
	for _, s := range seqs {
		o := seq{D: s.d, Tokens: s.tokens}
		for _, p := range s.probes {
			o.Probes = append(o.Probes, probe{p.index, p.start, p.gapAt})
		}
		out = append(out, o)
	}
	return out
}

// referenceGains scores each packed sequence with LogProbs once and
// averages the losses of each copy's tokens 2..m by direct indexing: the
// token at position p is predicted at p-1.
func referenceGains(t *testing.T, m *nativeeval.Model, seqs []copySeq, M int) [][]float64 {
	t.Helper()
	var out [][]float64
	for _, seq := range seqs {
		N := len(seq.tokens)
		res, err := m.LogProbs(context.Background(), seq.tokens[:N-1], seq.tokens[1:], nativeeval.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var gains []float64
		for _, p := range seq.probes {
			var first, second float64
			for j := 1; j < M; j++ {
				first += -float64(res.LogProbs[p.start+j-1])
				second += -float64(res.LogProbs[p.start+M+seq.d+j-1])
			}
			gains = append(gains, (first-second)/float64(M-1))
		}
		out = append(out, gains)
	}
	return out
}

// gainsDiffer is the largest difference between the probe's gains and the
// reference's.
func gainsDiffer(t *testing.T, cp *CopyProbe, ref [][]float64) float64 {
	t.Helper()
	if len(cp.Gaps) != len(ref) {
		t.Fatalf("%d gaps, the reference has %d", len(cp.Gaps), len(ref))
	}
	var worst float64
	for k, g := range cp.Gaps {
		if len(g.Gain) != len(ref[k]) || g.Probes != len(ref[k]) {
			t.Fatalf("gap %d: %d gains, the reference has %d", g.D, len(g.Gain), len(ref[k]))
		}
		for i, v := range g.Gain {
			worst = math.Max(worst, math.Abs(v-ref[k][i]))
			if d := g.FirstLoss[i] - g.SecondLoss[i]; d != v {
				t.Errorf("gap %d probe %d: gain %v, first - second loss %v", g.D, i, v, d)
			}
		}
	}
	return worst
}

// TestCopyGainsMatchReference: the gains of the packed passes equal a
// direct float64 sum over the same packed passes' log-probs; a second
// copy's span shifted by one (copyBroken) disagrees.
func TestCopyGainsMatchReference(t *testing.T) {
	ds, cfg, M := copyDataset(t), copyTestConfig(), copyTestM
	m := tinyModel(t, cfg.Context)
	seqs, err := copyLayout(ds, cfg, m.Arch.Vocab, M)
	if err != nil {
		t.Fatal(err)
	}
	ref := referenceGains(t, m, seqs, M)
	var tokens int
	cp, err := copyGains(context.Background(), seqs, M, modelLosses(m), func(n, _ int) { tokens += n })
	if err != nil {
		t.Fatal(err)
	}
	if worst := gainsDiffer(t, cp, ref); worst > 1e-9 {
		t.Errorf("gains differ from the reference by up to %.3g nats", worst)
	}
	if int64(tokens) != cp.Tokens || cp.M != M {
		t.Errorf("progress counted %d tokens, the probe %d; m %d", tokens, cp.Tokens, cp.M)
	}
	again, err := copyGains(context.Background(), seqs, M, modelLosses(m), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(cp)
	b, _ := json.Marshal(again)
	if !bytes.Equal(a, b) {
		t.Errorf("two runs give different JSON")
	}

	copyBroken = "offset"
	defer func() { copyBroken = "" }()
	broken, err := copyGains(context.Background(), seqs, M, modelLosses(m), nil)
	if err != nil {
		t.Fatal(err)
	}
	if worst := gainsDiffer(t, broken, ref); worst < 1e-3 {
		t.Errorf("the second copy's span off by one agrees with the reference (%.3g): the comparison cannot fail", worst)
	}
}

// TestCopyGainsFakeScores: a scorer whose loss is 1 nat lower on every
// second copy's tokens 2..m gives a gain of exactly 1 on every probe; one
// that is the same on both copies gives 0.
func TestCopyGainsFakeScores(t *testing.T) {
	ds, cfg, M := copyDataset(t), copyTestConfig(), copyTestM
	seqs, err := copyLayout(ds, cfg, 257, M)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		lower float64
	}{{"copies", 1}, {"no retrieval", 0}} {
		k := 0
		score := func(_ context.Context, tokens, targets []int32) ([]float64, error) {
			seq := seqs[k]
			k++
			loss := make([]float64, len(tokens))
			for i := range loss {
				loss[i] = 3 + 0.01*float64(i%7) // position-dependent: a span read at another offset gives another gain
			}
			for _, p := range seq.probes {
				first, second := p.start, p.start+M+seq.d
				for j := 1; j < M; j++ {
					loss[second+j-1] = loss[first+j-1] - tc.lower
				}
			}
			return loss, nil
		}
		cp, err := copyGains(context.Background(), seqs, M, score, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range cp.Gaps {
			for i, v := range g.Gain {
				if math.Abs(v-tc.lower) > 1e-12 {
					t.Errorf("%s: gap %d probe %d: gain %v, want %v", tc.name, g.D, i, v, tc.lower)
				}
			}
			if math.Abs(g.MeanGain-tc.lower) > 1e-12 {
				t.Errorf("%s: gap %d: mean gain %v, want %v", tc.name, g.D, g.MeanGain, tc.lower)
			}
		}
	}
}

// TestCopyProbeInEvaluate: evaluate records the probe (m = 32; at L_max
// = 128 the gaps 16, 32 and 63, one probe each), counts its tokens into
// the progress, and gives the same bytes twice.
func TestCopyProbeInEvaluate(t *testing.T) {
	ds := prefixDataset(t)
	cfg := NewConfig("random-qk", "test", 16, []int{1, 2, 4, 8}, 2, 3)
	a := modelspec.Config{Variant: "random-qk", Profile: "test", Vocab: 257, DModel: 32, Layers: 2, Heads: 2, DHidden: 48, Context: 16}.Arch()
	set := weightstest.RandomSet(t, a, 7)
	var runs [][]byte
	for range 2 {
		var last, total int64
		rc := &pipeline.RunContext{Context: context.Background(), Logf: t.Logf, Progress: func(d, n int64, _ string) { last, total = d, n }}
		res, done, err := evaluate(rc, cfg, set, ds)
		if err != nil {
			t.Fatal(err)
		}
		if last != total || done != total {
			t.Errorf("progress ends at %d (returned %d) of %d tokens", last, done, total)
		}
		c := res.Copy
		if c == nil || c.M != CopyProbeLen || len(c.Gaps) != 3 || c.Gaps[0].D != 16 || c.Gaps[1].D != 32 || c.Gaps[2].D != 63 || c.Tokens != cfg.copyTokens() {
			t.Fatalf("copy probe %+v", c)
		}
		if res.Format != 4 {
			t.Errorf("format %d", res.Format)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, b)
	}
	if !bytes.Equal(runs[0], runs[1]) {
		t.Errorf("two evaluations give different JSON")
	}
}

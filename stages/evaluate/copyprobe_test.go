package evaluate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"routebench/model/nativeeval"
	"routebench/modelspec"
	"routebench/modelspec/weights/weightstest"
	"routebench/pipeline"
	"routebench/stages/tokenize/shards"
	"routebench/stats"
)

// copyDataset tokenizes (bytes) a training file and four held-out
// documents of 1,200 random letters: 4,804 held-out tokens, more than the
// probes of copyTestConfig need (2,463), so that their text never repeats.
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
	if got := cfg.copyTokens(); got != 157748 {
		t.Errorf("copy tokens %d, want 157,748", got)
	}
	cfg.RopeScaling = "yarn"
	if cfg.copyPlan(CopyProbeLen) != nil || cfg.copyTokens() != 0 {
		t.Errorf("a probe under an inference-time RoPE extension")
	}
	if small := NewConfig("rope", "test", 8, []int{1, 8}, 2, 1); small.copyPlan(CopyProbeLen) != nil {
		t.Errorf("a probe at L_max = 64, where no gap of 16 fits beside three strings of 32")
	}
	// L_max = 3m + 33 is the shortest with a probe: its longest gap holds
	// R; one less and neither it nor a gap of 16 with R before fits.
	edge := Config{CopyProbe: true, Context: 3*CopyProbeLen + 33, Multipliers: []int{1}}
	if p := edge.copyPlan(CopyProbeLen); len(p) != 2 || p[1].d != CopyProbeLen+32 || !controlInGap(p[1].d, CopyProbeLen) {
		t.Errorf("at L_max = 3m + 33 the plan %v, want the gaps 16 and m + 32", p)
	}
	edge.Context--
	if p := edge.copyPlan(CopyProbeLen); p != nil {
		t.Errorf("at L_max = 3m + 32 the plan %v, want none", p)
	}
}

// TestCopyLayout: in every sequence the probes lie one after another
// within L_max; each string (S and its control R) is new and free of the
// end-of-document id; S's second copy equals its first, d tokens after
// it; R ends copyControlLead tokens before the second copy when d >= m +
// 32, else before the first copy; every other token is held-out text,
// read in order, no two probes sharing a token; two calls give the same
// bytes. A control that reuses S (copyBroken "reuse") fails.
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
	held, err := ds.Tokens(shards.SplitHeldOut)
	if err != nil {
		t.Fatal(err)
	}
	if errs := layoutErrors(seqs, cfg, held, m); len(errs) > 0 {
		t.Errorf("%d faults, the first: %s", len(errs), errs[0])
	}

	copyBroken = "reuse"
	defer func() { copyBroken = "" }()
	broken, err := copyLayout(ds, cfg, 257, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(layoutErrors(broken, cfg, held, m)) == 0 {
		t.Errorf("a control string that is S again passes: the check cannot fail")
	}
}

// layoutErrors checks the layout against the plan and the spec: the
// positions of the copies and of R are computed here from d, not read
// from the probes.
func layoutErrors(seqs []copySeq, cfg Config, held *shards.Tokens, m int) []string {
	var errs []string
	fail := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	plan := cfg.copyPlan(m)
	if len(seqs) != len(plan) || len(plan) != 7 || plan[0] != (copyGapPlan{16, 8}) || plan[len(plan)-1] != (copyGapPlan{1024 - 2*m - 1, 1}) {
		return []string{fmt.Sprintf("%d sequences for the plan %v", len(seqs), plan)}
	}
	n := held.Len()
	used := make([]bool, n)
	var strs [][]int32
	for k, seq := range seqs {
		d := plan[k].d
		per := 2*m + d // S, the gap (R inside), S
		if d < m+32 {
			per += m + 16 // R and 16 tokens of text before the first copy
		}
		if seq.d != d || len(seq.probes) != plan[k].probes || len(seq.tokens) != plan[k].probes*per || len(seq.tokens)-1 > cfg.longest() {
			fail("gap %d: %d tokens, %d probes; the plan says %v (L_max %d)", seq.d, len(seq.tokens), len(seq.probes), plan[k], cfg.longest())
			continue
		}
		for i, p := range seq.probes {
			begin := i * per
			start, control := begin, begin+m+d-16-m // R ends 16 tokens before the second copy
			if d < m+32 {
				control, start = begin, begin+m+16 // R, 16 tokens, then S
			}
			second := start + m + d
			if p.begin != begin || p.start != start || p.control != control {
				fail("gap %d probe %d: begins at %d, S at %d, R at %d; want %d, %d, %d", d, i, p.begin, p.start, p.control, begin, start, control)
				continue
			}
			s, r := seq.tokens[start:start+m], seq.tokens[control:control+m]
			if !slices.Equal(s, seq.tokens[second:second+m]) {
				fail("gap %d probe %d: the second copy differs from the first", d, i)
			}
			for _, x := range slices.Concat(s, r) {
				if x == held.EOT() || x < 0 || x >= 257 {
					fail("gap %d probe %d: token %d in a string", d, i, x)
				}
			}
			for _, str := range [][]int32{s, r} {
				if slices.ContainsFunc(strs, func(o []int32) bool { return slices.Equal(o, str) }) {
					fail("gap %d probe %d reuses an earlier string", d, i)
				}
				strs = append(strs, str)
			}
			j := 0 // the probe's text tokens so far
			for q := begin; q < begin+per; q++ {
				if (q >= start && q < start+m) || (q >= second && q < second+m) || (q >= control && q < control+m) {
					continue
				}
				pos := (p.textAt + int64(j)) % n
				j++
				if used[pos] {
					fail("gap %d probe %d: held-out token %d is in another probe too", d, i, pos)
				}
				used[pos] = true
				if got := seq.tokens[q]; got != held.At(pos) {
					fail("gap %d probe %d, token %d: %d, the held-out text has %d", d, i, q, got, held.At(pos))
				}
			}
			if j != per-3*m {
				fail("gap %d probe %d: %d tokens of text, want %d", d, i, j, per-3*m)
			}
		}
	}
	return errs
}

// fmtSeqs is a layout in exported fields, for its JSON bytes.
func fmtSeqs(seqs []copySeq) any {
	type probe struct {
		Index, Begin, Start, Control int
		TextAt                       int64
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
			o.Probes = append(o.Probes, probe{p.index, p.begin, p.start, p.control, p.textAt})
		}
		out = append(out, o)
	}
	return out
}

// copyRef is a reference's gains at one gap, raw and controlled.
type copyRef struct{ raw, control []float64 }

// referenceGains scores each packed sequence with LogProbs once and
// averages the losses of each copy's tokens 2..m by direct indexing: the
// token at position p is predicted at p-1. The control string's loss is
// scored directly, by a pass of its own over the sequence up to R's last
// token, R placed by the spec (16 tokens before the second copy when d >=
// m + 32, else 16 before the first), not read from the layout.
func referenceGains(t *testing.T, m *nativeeval.Model, seqs []copySeq, M int) []copyRef {
	t.Helper()
	logProbs := func(tokens []int32) []float64 {
		res, err := m.LogProbs(context.Background(), tokens[:len(tokens)-1], tokens[1:], nativeeval.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res.LogProbs
	}
	var out []copyRef
	for _, seq := range seqs {
		lp := logProbs(seq.tokens)
		var ref copyRef
		for _, p := range seq.probes {
			second := p.start + M + seq.d
			control := second - 16 - M
			if seq.d < M+32 {
				control = p.start - 16 - M
			}
			direct := logProbs(seq.tokens[:control+M])
			var first, sec, ctl float64
			for j := 1; j < M; j++ {
				first += -lp[p.start+j-1]
				sec += -lp[second+j-1]
				ctl += -direct[control+j-1]
			}
			ref.raw = append(ref.raw, (first-sec)/float64(M-1))
			ref.control = append(ref.control, (ctl-sec)/float64(M-1))
		}
		out = append(out, ref)
	}
	return out
}

// gainsDiffer is the largest difference between the probe's raw and
// controlled gains and the reference's.
func gainsDiffer(t *testing.T, cp *CopyProbe, ref []copyRef) (raw, control float64) {
	t.Helper()
	if len(cp.Gaps) != len(ref) {
		t.Fatalf("%d gaps, the reference has %d", len(cp.Gaps), len(ref))
	}
	for k, g := range cp.Gaps {
		if len(g.Gain) != len(ref[k].raw) || len(g.ControlGain) != len(ref[k].raw) || g.Probes != len(ref[k].raw) {
			t.Fatalf("gap %d: %d gains and %d controlled, the reference has %d", g.D, len(g.Gain), len(g.ControlGain), len(ref[k].raw))
		}
		for i, v := range g.Gain {
			raw = math.Max(raw, math.Abs(v-ref[k].raw[i]))
			control = math.Max(control, math.Abs(g.ControlGain[i]-ref[k].control[i]))
			if d := g.FirstLoss[i] - g.SecondLoss[i]; d != v {
				t.Errorf("gap %d probe %d: gain %v, first - second loss %v", g.D, i, v, d)
			}
			if d := g.ControlLoss[i] - g.SecondLoss[i]; d != g.ControlGain[i] {
				t.Errorf("gap %d probe %d: controlled gain %v, control - second loss %v", g.D, i, g.ControlGain[i], d)
			}
		}
		if g.MeanGain != stats.Mean(g.Gain) || g.MeanControlGain != stats.Mean(g.ControlGain) {
			t.Errorf("gap %d: means %v and %v of the gains %v and %v", g.D, g.MeanGain, g.MeanControlGain, g.Gain, g.ControlGain)
		}
	}
	return raw, control
}

// TestCopyGainsMatchReference: the gains of the packed passes equal a
// direct float64 sum over the same packed passes' log-probs, and the
// controlled gains one over a direct pass up to the control string; a
// second copy's span shifted by one (copyBroken "offset") and a control's
// shifted by one ("control") disagree.
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
	if raw, control := gainsDiffer(t, cp, ref); raw > 1e-9 || control > 1e-9 {
		t.Errorf("gains differ from the reference by up to %.3g nats, controlled gains by %.3g", raw, control)
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

	defer func() { copyBroken = "" }()
	for _, mut := range []struct{ name, what string }{{"offset", "the second copy's span"}, {"control", "the control string's span"}} {
		copyBroken = mut.name
		broken, err := copyGains(context.Background(), seqs, M, modelLosses(m), nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, control := gainsDiffer(t, broken, ref)
		if worst := max(raw, control); worst < 1e-3 {
			t.Errorf("%s off by one agrees with the reference (%.3g): the comparison cannot fail", mut.what, worst)
		}
		t.Logf("%s off by one: worst differences %.3g (raw), %.3g (controlled)", mut.what, raw, control)
		if mut.name == "control" && raw > 1e-9 {
			t.Errorf("the control's mutation moves the raw gain (%.3g)", raw)
		}
	}
}

// TestCopyGainsFakeScores: a scorer whose loss is 1 nat lower on every
// second copy's tokens 2..m gives a gain of exactly 1 on every probe; one
// that is the same on both copies gives 0; a control string's loss 0.25
// above the first copy's adds 0.25 to the controlled gain.
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
					loss[p.control+j-1] = loss[first+j-1] + 0.25
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
				if math.Abs(v-tc.lower) > 1e-12 || math.Abs(g.ControlGain[i]-tc.lower-0.25) > 1e-12 {
					t.Errorf("%s: gap %d probe %d: gain %v, controlled %v; want %v and %v", tc.name, g.D, i, v, g.ControlGain[i], tc.lower, tc.lower+0.25)
				}
			}
			if math.Abs(g.MeanGain-tc.lower) > 1e-12 || math.Abs(g.MeanControlGain-tc.lower-0.25) > 1e-12 {
				t.Errorf("%s: gap %d: mean gain %v, controlled %v", tc.name, g.D, g.MeanGain, g.MeanControlGain)
			}
		}
	}
}

// TestCopyProbeInEvaluate: evaluate records the probe (m = 32; at L_max
// = 256 the gaps 16 (2 probes, R before the first copy), 32 (R before),
// 64, 128 and 191 (R inside), one probe each), with the controlled gains,
// counts its tokens into the progress, and gives the same bytes twice.
func TestCopyProbeInEvaluate(t *testing.T) {
	ds := prefixDataset(t)
	cfg := NewConfig("random-qk", "test", 16, []int{1, 2, 4, 8, 16}, 2, 3)
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
		var ds, probes []int
		for _, g := range c.Gaps {
			ds, probes = append(ds, g.D), append(probes, g.Probes)
			if len(g.ControlGain) != g.Probes || len(g.ControlLoss) != g.Probes {
				t.Errorf("gap %d: %d probes, %d controlled gains", g.D, g.Probes, len(g.ControlGain))
			}
		}
		if c == nil || c.M != CopyProbeLen || !slices.Equal(ds, []int{16, 32, 64, 128, 191}) || !slices.Equal(probes, []int{2, 1, 1, 1, 1}) || c.Tokens != cfg.copyTokens() {
			t.Fatalf("copy probe %+v: gaps %v, probes %v", c, ds, probes)
		}
		if res.Format != 5 {
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

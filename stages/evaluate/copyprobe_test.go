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
// probes of copyTestConfig read, so that their text never repeats
// (TestCopyLayout fails when a held-out token is read twice).
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
	if got := cfg.copyTokens(); got != 2*157364 {
		t.Errorf("copy tokens %d, want 2 x 157,364 (each gap's pass and its control pass)", got)
	}
	text := 0
	for _, p := range cfg.copyPlan(CopyProbeLen) {
		text += p.d * p.probes
	}
	if text != 154175 {
		t.Errorf("the probes read %d tokens of text; the comment on copyLayout says 154,175", text)
	}
	cfg.RopeScaling = "yarn"
	if cfg.copyPlan(CopyProbeLen) != nil || cfg.copyTokens() != 0 {
		t.Errorf("a probe under an inference-time RoPE extension")
	}
	if small := NewConfig("rope", "test", 8, []int{1, 8}, 2, 1); small.copyPlan(CopyProbeLen) != nil {
		t.Errorf("a probe at L_max = 64, where no gap of 16 fits beside two strings of 32")
	}
	// L_max = 2m + 17 is the shortest with a probe, a gap of 16; one
	// less and none fits.
	edge := Config{CopyProbe: true, Context: 2*CopyProbeLen + 17, Multipliers: []int{1}}
	if p := edge.copyPlan(CopyProbeLen); !reflect.DeepEqual(p, []copyGapPlan{{16, 1}}) {
		t.Errorf("at L_max = 2m + 17 the plan %v, want one probe at the gap 16", p)
	}
	edge.Context--
	if p := edge.copyPlan(CopyProbeLen); p != nil {
		t.Errorf("at L_max = 2m + 16 the plan %v, want none", p)
	}
}

// TestCopyLayout: in every sequence the probes lie one after another
// within L_max; each string (S and its control R) is new and free of the
// end-of-document id; S's second copy equals its first, d tokens after
// it; every other token is held-out text, read in order, no two probes
// sharing a token; the control sequence is the probe sequence with each
// first copy R instead of S; two calls give the same bytes. A control
// that reuses S (copyBroken "reuse") and a control pass with other text
// ("text") fail.
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

	defer func() { copyBroken = "" }()
	for _, mut := range []string{"reuse", "text"} {
		copyBroken = mut
		broken, err := copyLayout(ds, cfg, 257, m)
		if err != nil {
			t.Fatal(err)
		}
		if len(layoutErrors(broken, cfg, held, m)) == 0 {
			t.Errorf("the mutation %q passes: the check cannot fail", mut)
		}
	}
}

// layoutErrors checks the layout against the plan and the spec: the
// positions of the copies are computed here from d, not read from the
// probes.
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
		per := 2*m + d // S, the gap, S
		if seq.d != d || len(seq.probes) != plan[k].probes || len(seq.tokens) != plan[k].probes*per || len(seq.tokens)-1 > cfg.longest() || len(seq.control) != len(seq.tokens) {
			fail("gap %d: %d tokens (control %d), %d probes; the plan says %v (L_max %d)", seq.d, len(seq.tokens), len(seq.control), len(seq.probes), plan[k], cfg.longest())
			continue
		}
		for i, p := range seq.probes {
			start := i * per
			second := start + m + d
			if p.start != start {
				fail("gap %d probe %d: S at %d; want %d", d, i, p.start, start)
				continue
			}
			s, r := seq.tokens[start:start+m], seq.control[start:start+m]
			if !slices.Equal(s, seq.tokens[second:second+m]) || !slices.Equal(s, seq.control[second:second+m]) {
				fail("gap %d probe %d: a second copy (probe or control pass) differs from the first copy", d, i)
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
			for q := start + m; q < second; q++ {
				pos := (p.textAt + int64(q-start-m)) % n
				if used[pos] {
					fail("gap %d probe %d: held-out token %d is in another probe too", d, i, pos)
				}
				used[pos] = true
				if got := seq.tokens[q]; got != held.At(pos) {
					fail("gap %d probe %d, token %d: %d, the held-out text has %d", d, i, q, got, held.At(pos))
				}
				if seq.control[q] != seq.tokens[q] {
					fail("gap %d probe %d, token %d: the control pass has %d, the probe pass %d", d, i, q, seq.control[q], seq.tokens[q])
				}
			}
		}
	}
	return errs
}

// fmtSeqs is a layout in exported fields, for its JSON bytes.
func fmtSeqs(seqs []copySeq) any {
	type probe struct {
		Index, Start int
		TextAt       int64
	}
	type seq struct {
		D               int
		Tokens, Control []int32
		Probes          []probe
	}
	var out []seq
	for _, s := range seqs {
		o := seq{D: s.d, Tokens: s.tokens, Control: s.control}
		for _, p := range s.probes {
			o.Probes = append(o.Probes, probe{p.index, p.start, p.textAt})
		}
		out = append(out, o)
	}
	return out
}

// copyRef is a reference's gains at one gap, raw and controlled.
type copyRef struct{ raw, control []float64 }

// referenceGains scores each packed probe sequence with LogProbs once
// and averages the losses of each copy's tokens 2..m by direct indexing:
// the token at position p is predicted at p-1. The controlled gain's
// second-copy loss is scored directly, by a pass of its own over the
// probe sequence up to that copy's last token with the first copy's
// tokens swapped for the control sequence's there (built here, not read
// from the control sequence past the first copy).
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
		for i, p := range seq.probes {
			second := p.start + M + seq.d
			ctlSeq := slices.Clone(seq.tokens[:second+M])
			for q := range i + 1 { // every first copy up to this probe's
				s := seq.probes[q].start
				copy(ctlSeq[s:s+M], seq.control[s:s+M])
			}
			direct := logProbs(ctlSeq)
			var first, sec, ctl float64
			for j := 1; j < M; j++ {
				first += -lp[p.start+j-1]
				sec += -lp[second+j-1]
				ctl += -direct[second+j-1]
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
// controlled gains one over a direct pass of the control layout up to
// the second copy; a second copy's span shifted by one (copyBroken
// "offset") and the control pass's shifted by one ("control") disagree.
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
// that is the same on both copies gives 0; a control pass whose second
// copy's loss is 0.25 above the first copy's gives a controlled gain of
// 0.25 more. The scorer tells the two passes apart by their tokens.
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
		calls := 0
		score := func(_ context.Context, tokens, targets []int32) ([]float64, error) {
			seq := seqs[calls/2]
			calls++
			control := slices.Equal(tokens, seq.control[:len(seq.control)-1])
			if !control && !slices.Equal(tokens, seq.tokens[:len(seq.tokens)-1]) {
				return nil, fmt.Errorf("a pass over neither sequence of the gap %d", seq.d)
			}
			loss := make([]float64, len(tokens))
			for i := range loss {
				loss[i] = 3 + 0.01*float64(i%7) // position-dependent: a span read at another offset gives another gain
			}
			for _, p := range seq.probes {
				first, second := p.start, p.start+M+seq.d
				for j := 1; j < M; j++ {
					if control {
						loss[second+j-1] = loss[first+j-1] + 0.25
					} else {
						loss[second+j-1] = loss[first+j-1] - tc.lower
					}
				}
			}
			return loss, nil
		}
		cp, err := copyGains(context.Background(), seqs, M, score, nil)
		if err != nil {
			t.Fatal(err)
		}
		if calls != 2*len(seqs) {
			t.Errorf("%d passes for %d gaps, want two per gap", calls, len(seqs))
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
// = 256 the gaps 16 (2 probes), 32, 64, 128 and 191, one probe each),
// with the controlled gains,
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
		if res.Format != 6 {
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

package evaluate

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"routebench/artifacts"
	"routebench/model/nativeeval"
	"routebench/modelspec"
	"routebench/modelspec/weights"
	"routebench/modelspec/weights/weightstest"
	"routebench/pipeline"
	"routebench/stages/tokenize"
	"routebench/stages/tokenize/shards"
)

// T is the training context of the models of these tests.
const testT = 8

// byteModel is a random model over byte tokens (vocabulary 257) at context
// testT, stored as the train stage would store it.
func byteModel(t *testing.T) (*weights.Set, *artifacts.Artifact) {
	t.Helper()
	a := modelspec.Arch{Variant: "random-qkv", Profile: "smoke", Vocab: 257, DModel: 16, Layers: 2, Heads: 2,
		DHidden: 32, Context: testT, NormEps: 1e-5, RopeBase: 10000, Rotation: modelspec.RotationAccumulated, ValueRot: true}
	set := weightstest.RandomSet(t, a, 3)
	var buf bytes.Buffer
	if err := set.Write(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, modelspec.WeightsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	art, err := store.Put(artifacts.ActionID{3}, "train/"+a.Variant, dir)
	if err != nil {
		t.Fatal(err)
	}
	return set, art
}

// evalCorpus tokenizes files (name -> text) as an evaluation-only corpus
// and stores the shards; it returns them opened, too.
func evalCorpus(t *testing.T, files map[string]string) (*artifacts.Artifact, *shards.Dataset) {
	t.Helper()
	corpus := filepath.Join(t.TempDir(), "eval")
	os.MkdirAll(corpus, 0o755)
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(corpus, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := tokenize.Config{Tokenizer: tokenize.TokenizerBytes, Corpus: []string{corpus}, EvalOnly: true, ShardTokens: 1 << 10}
	out := filepath.Join(t.TempDir(), "shards")
	if err := tokenize.Run(context.Background(), cfg, out, nil); err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	art, err := store.Put(artifacts.ActionID{4}, "tokenize@eval", out)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range art.Names() {
		p, _ := art.Path(n)
		paths = append(paths, p)
	}
	ds, err := shards.Open(paths)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	return art, ds
}

// runEval runs the stage and returns eval.json.
func runEval(t *testing.T, cfg Config, tokenized, w *artifacts.Artifact) *Result {
	t.Helper()
	st := Stage(cfg, &pipeline.Stage{Name: "tokenize"}, &pipeline.Stage{Name: "train/" + cfg.Variant})
	out := t.TempDir()
	rc := &pipeline.RunContext{Context: context.Background(), Stage: st, OutDir: out, WorkDir: t.TempDir(),
		Inputs: map[string]*artifacts.Artifact{shards.Input: tokenized, WeightsInput: w}, Logf: t.Logf, Progress: func(int64, int64, string) {}}
	if err := st.Run(rc); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	res := new(Result)
	if err := json.Unmarshal(b, res); err != nil {
		t.Fatal(err)
	}
	return res
}

// letters is text of n bytes cycling through s.
func letters(s string, n int) string { return strings.Repeat(s, n/len(s)+1)[:n] }

// TestProtocols runs every protocol on an evaluation corpus and checks
// each window loss against a direct computation with the native evaluator:
// the primary protocol's is the mean over all L positions of one LogProbs
// call; a sliding window's is the mean, over its last S positions p, of
// log p(x_p+1 | the window's tokens up to p) computed by its own LogProbs
// call on just that prefix (so the context really is the window's, no
// more); in-document windows lie inside one document.
func TestProtocols(t *testing.T) {
	set, w := byteModel(t)
	// Documents of 40, 30 and 12 bytes (+ end-of-document): in-document
	// windows fit at L = 8, 16 and 32 (40+1 tokens hold 33), not at 64.
	tokenized, ds := evalCorpus(t, map[string]string{
		"a.txt": letters("abcdefg", 40), "b.txt": letters("hijklmnop", 30), "c.txt": letters("qrs", 12),
		"d.txt": letters("tuvwxyz ", 60), "e.txt": letters("0123456789", 60),
	})
	cfg := NewConfig("random-qkv", "smoke", testT, []int{1, 2, 4, 8}, 3, 11)
	cfg.Corpus, cfg.Protocols = "eval", []string{"sliding:3", "in-document", "in-document+sliding:5"}
	res := runEval(t, cfg, tokenized, w)

	// eval.json records the protocols, in order, with their descriptions.
	if !slices.Equal(res.Protocol.Protocols, cfg.Protocols) || len(res.Protocols) != 3 || res.Corpus != "eval" {
		t.Fatalf("eval.json protocols %v / %d results / corpus %q", res.Protocol.Protocols, len(res.Protocols), res.Corpus)
	}
	for i, p := range res.Protocols {
		if p.Protocol != cfg.Protocols[i] || p.Description == "" {
			t.Errorf("protocol %d recorded as %q (%q)", i, p.Protocol, p.Description)
		}
	}
	if !strings.Contains(res.Protocols[0].Description, "last 3 positions") {
		t.Errorf("sliding:3 described as %q", res.Protocols[0].Description)
	}

	m, err := nativeeval.Load(set)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	logProbs := func(toks []int32) []float64 {
		out, err := m.LogProbs(ctx, toks[:len(toks)-1], toks[1:], nativeeval.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return out.LogProbs
	}
	for li, mult := range cfg.Multipliers {
		L := mult * testT
		ws, err := ds.EvalWindows(cfg.Seed, L, cfg.Windows)
		if err != nil {
			t.Fatal(err)
		}
		prim, slide := res.Lengths[li], res.Protocols[0].Lengths[li]
		// Equal tokens: 3 windows of 8T, so 24 of T, 12 of 2T, 6 of 4T.
		if want := 3 * 8 / mult; len(prim.WindowLoss) != want || len(prim.PrefixLoss) != want || len(slide.WindowLoss) != want {
			t.Fatalf("L=%d: %d windows (%d prefixes, %d sliding), want %d", L, len(prim.WindowLoss), len(prim.PrefixLoss), len(slide.WindowLoss), want)
		}
		if res.Format != FormatVersion || prim.PrefixRatio == nil {
			t.Fatalf("format %d, prefix ratio %v", res.Format, prim.PrefixRatio)
		}
		if li == 0 && (prim.PrefixRatio.Value != 1 || prim.PrefixRatio.Lo != 1 || prim.PrefixRatio.Hi != 1) {
			t.Errorf("prefix ratio at T %v, want exactly 1", prim.PrefixRatio)
		}
		if slide.L != L || slide.Scored != 3 || prim.Scored != 0 || slide.Buckets != nil || prim.Buckets == nil {
			t.Fatalf("L=%d: sliding result %+v", L, slide)
		}
		for k, win := range ws {
			lp := logProbs(win)
			s := 0.0
			for _, v := range lp {
				s -= v
			}
			if want := s / float64(L); prim.WindowLoss[k] != want {
				t.Errorf("L=%d window %d: primary loss %v, direct mean %v", L, k, prim.WindowLoss[k], want)
			}
			pre := 0.0
			for _, v := range lp[:testT] {
				pre -= v
			}
			if want := pre / testT; math.Abs(prim.PrefixLoss[k]-want) > 1e-12 {
				t.Errorf("L=%d window %d: prefix loss %v, direct mean of the first %d %v", L, k, prim.PrefixLoss[k], testT, want)
			}
			direct := 0.0
			for p := L - 3; p < L; p++ {
				pre := logProbs(win[:p+2]) // inputs win[0..p], the last target win[p+1]
				direct -= pre[p]
			}
			direct /= 3
			if got := slide.WindowLoss[k]; math.Abs(got-direct) > 1e-5*(1+math.Abs(direct)) {
				t.Errorf("L=%d window %d: sliding:3 loss %.9g, direct computation %.9g", L, k, got, direct)
			}
		}
		if li == 0 && (slide.Ratio.Value != 1 || prim.Ratio.Value != 1) {
			t.Errorf("ratios at T: sliding %v, primary %v; want 1", slide.Ratio, prim.Ratio)
		}
	}

	// In-document protocols: lengths 8, 16, 32 (the 60-byte document holds
	// 61 tokens, not 65), 64 skipped with the reason; scoring as above.
	for _, pr := range res.Protocols[1:] {
		if len(pr.Lengths) != 3 || len(pr.Skipped) != 1 || pr.Skipped[0].L != 64 || !strings.Contains(pr.Skipped[0].Reason, "longest: 61 of 5 documents") {
			t.Errorf("%s: %d lengths, skipped %+v", pr.Protocol, len(pr.Lengths), pr.Skipped)
		}
	}
	for li, L := range []int{8, 16, 32} {
		ws, ok, _, err := inDocuments.windows(ds, cfg.Seed, L, cfg.Windows)
		if err != nil || !ok {
			t.Fatalf("L=%d: in-document windows: %v", L, err)
		}
		for k, win := range ws {
			lp := logProbs(win)
			s, tail := 0.0, 0.0
			for i, v := range lp {
				s -= v
				if i >= L-5 {
					tail -= v
				}
			}
			if got, want := res.Protocols[1].Lengths[li].WindowLoss[k], s/float64(L); got != want {
				t.Errorf("L=%d window %d: windows loss %v, direct %v", L, k, got, want)
			}
			if got, want := res.Protocols[2].Lengths[li].WindowLoss[k], tail/5; math.Abs(got-want) > 1e-12 {
				t.Errorf("L=%d window %d: windows+sliding:5 loss %v, direct %v", L, k, got, want)
			}
		}
	}
}

// In-document windows never cross a document boundary: every window is
// one document's text, its end-of-document token at most the last target,
// however many are drawn.
func TestInDocumentWindowsStayInside(t *testing.T) {
	_, ds := evalCorpus(t, map[string]string{"a.txt": letters("a", 50), "b.txt": letters("b", 20), "c.txt": letters("c", 33)})
	eot := int32(256)
	for _, L := range []int{4, 16, 20, 32} {
		ws, ok, why, err := inDocuments.windows(ds, 5, L, 300)
		if err != nil || !ok {
			t.Fatalf("L=%d: %v %s", L, err, why)
		}
		from := map[int32]bool{}
		for _, w := range ws {
			for i, v := range w {
				if v == eot && i != len(w)-1 || v != eot && v != w[0] {
					t.Fatalf("L=%d: window crosses a document boundary: %v", L, w)
				}
			}
			from[w[0]] = true
		}
		// b (21 tokens) holds windows up to L = 20; c (34) up to 33.
		want := map[int]int{4: 3, 16: 3, 20: 3, 32: 2}[L]
		if len(from) != want {
			t.Errorf("L=%d: windows from %d documents, want %d", L, len(from), want)
		}
	}
	if _, ok, why, err := inDocuments.windows(ds, 5, 51, 1); err != nil || ok || !strings.Contains(why, "longest: 51 of 3 documents") {
		t.Errorf("a window longer than every document: ok %v, %q, %v", ok, why, err)
	}
}

// Bad protocol strings are one-line errors that list the valid ones.
func TestParseProtocol(t *testing.T) {
	for s, want := range map[string]Protocol{
		"in-document":            {Name: "in-document", InDocuments: true},
		"sliding:256":            {Name: "sliding:256", Stride: 256},
		"in-document+sliding:16": {Name: "in-document+sliding:16", InDocuments: true, Stride: 16},
	} {
		if p, err := ParseProtocol(s); err != nil || p != want {
			t.Errorf("%q: %+v, %v; want %+v", s, p, err, want)
		}
	}
	for _, bad := range []string{"sliding", "sliding:0", "sliding:-4", "sliding:x", "stride:64", "", "windows+", "windows+windows", "random", "Sliding:64"} {
		_, err := ParseProtocol(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, validProtocols) || !strings.Contains(msg, `"`+bad+`"`) {
			t.Errorf("%q: error %q is not one line naming it and listing the valid protocols", bad, msg)
		}
	}
	// The old name of in-document is refused with the new one.
	for old, now := range map[string]string{"windows": `"in-document"`, "windows+sliding:16": `"in-document+sliding:16"`} {
		if _, err := ParseProtocol(old); err == nil || !strings.Contains(err.Error(), "is now called "+now) {
			t.Errorf("%q: %v; want it refused naming %s", old, err, now)
		}
	}
	cfg := NewConfig("rope", "smoke", 32, []int{1, 2}, 2, 7)
	cfg.Protocols = []string{"sliding:8", "sliding:8"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "evaluate/rope: evaluation protocol \"sliding:8\" is listed twice") {
		t.Errorf("duplicate protocol: %v", err)
	}
	cfg.Protocols = []string{"sliding:8", "bogus"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `"bogus" is unknown; valid: `) {
		t.Errorf("unknown protocol: %v", err)
	}
}

package evaluate

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"routebench/model/nativeeval"
	"routebench/modelspec"
	"routebench/modelspec/weights/weightstest"
	"routebench/pipeline"
	"routebench/stages/tokenize"
	"routebench/stages/tokenize/shards"
)

// prefixDataset tokenizes (bytes) one training file and four held-out
// documents of random text, each long enough for a window of 128.
func prefixDataset(t *testing.T) *shards.Dataset {
	return letterDataset(t, 1, 2, func(i int) int { return 300 + 40*i })
}

// letterDataset tokenizes (bytes) train.txt and the held-out h1..h4.txt,
// file i (train.txt is 0) holding size(i) random letters from a..t drawn
// with the PCG seeds s1, s2.
func letterDataset(t *testing.T, s1, s2 uint64, size func(i int) int) *shards.Dataset {
	t.Helper()
	corpus := t.TempDir()
	r := rand.New(rand.NewPCG(s1, s2))
	held := []string{"h1.txt", "h2.txt", "h3.txt", "h4.txt"}
	for i, name := range append([]string{"train.txt"}, held...) {
		b := make([]byte, size(i))
		for k := range b {
			b[k] = byte('a' + r.IntN(20))
		}
		if err := os.WriteFile(filepath.Join(corpus, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := tokenize.Config{Tokenizer: tokenize.TokenizerBytes, Corpus: []string{corpus}, HeldOut: held, ShardTokens: 1 << 10}
	out := filepath.Join(t.TempDir(), "shards")
	if err := tokenize.Run(context.Background(), cfg, out, nil); err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(out, "*"))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := shards.Open(paths)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	return ds
}

// TestPrefixDesignMatchesPrefixWindows: under DesignPrefixes every length
// past T is scored on the prefixes of the long windows, one per held-out
// document, with the same losses and far mass as a pass over each prefix
// window itself; T's windows avoid the long ones. A reference that reads
// one position more than the prefix (a length off by one) disagrees.
func TestPrefixDesignMatchesPrefixWindows(t *testing.T) {
	ds := prefixDataset(t)
	const T = 16
	for _, v := range []string{"random-qk", "path"} {
		t.Run(v, func(t *testing.T) {
			a := modelspec.Config{Variant: v, Profile: "test", Vocab: 257, DModel: 32, Layers: 2, Heads: 2, DHidden: 48, Context: T}.Arch()
			set := weightstest.RandomSet(t, a, 5)
			cfg := NewConfig(v, "test", T, []int{1, 2, 4, 8}, 4, 3)
			cfg.Design = DesignPrefixes
			rc := &pipeline.RunContext{Context: context.Background(), Logf: t.Logf, Progress: func(int64, int64, string) {}}
			res, _, err := evaluate(rc, cfg, set, ds)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Spans) != 4 {
				t.Fatalf("%d spans, want 4", len(res.Spans))
			}
			docs := map[string]bool{}
			for _, sp := range res.Spans {
				docs[sp.Doc] = true
			}
			if len(docs) != 4 {
				t.Errorf("long windows in documents %v, want one in each of 4", docs)
			}
			m, err := nativeeval.Load(set)
			if err != nil {
				t.Fatal(err)
			}
			held, _ := ds.Tokens(shards.SplitHeldOut)
			for _, lr := range res.Lengths {
				L := lr.L
				if L == T {
					if got := len(lr.WindowLoss); got != cfg.WindowsAt(T) {
						t.Errorf("T: %d windows, want %d", got, cfg.WindowsAt(T))
					}
					continue
				}
				if len(lr.WindowLoss) != 4 {
					t.Fatalf("L=%d: %d windows, want the 4 long ones", L, len(lr.WindowLoss))
				}
				var diags [][]nativeeval.HeadStats
				for w, sp := range res.Spans {
					win := make([]int32, sp.Tokens)
					if err := held.Read(win, sp.Offset); err != nil {
						t.Fatal(err)
					}
					mean := func(n int) float64 {
						opts := nativeeval.Options{}
						if w < cfg.FarWindows && n == L {
							opts.FarDistances = cfg.FarDistances
						}
						out, err := m.LogProbs(context.Background(), win[:n], win[1:n+1], opts)
						if err != nil {
							t.Fatal(err)
						}
						if len(out.Heads) > 0 {
							diags = append(diags, out.Heads)
						}
						var s float64
						for _, lp := range out.LogProbs {
							s -= lp
						}
						return s / float64(n)
					}
					if got, want := lr.WindowLoss[w], mean(L); math.Abs(got-want) > 1e-9 {
						t.Errorf("L=%d window %d: loss %.12f, the prefix window's own %.12f", L, w, got, want)
					}
					if L+1 < len(win) {
						if got, wrong := lr.WindowLoss[w], mean(L+1); math.Abs(got-wrong) <= 1e-9 {
							t.Errorf("L=%d window %d: the loss also matches a window one longer: the comparison cannot fail", L, w)
						}
					}
				}
				fm, _ := summarizeDiagnostics(diags, cfg.FarDistances)
				for k := range fm {
					if math.Abs(fm[k].Mean-lr.FarMass[k].Mean) > 1e-6 {
						t.Errorf("L=%d: far mass beyond %d is %.6f, the prefix windows' own %.6f", L, fm[k].Distance, lr.FarMass[k].Mean, fm[k].Mean)
					}
				}
				if v == "path" && len(lr.StepGaps) == 0 {
					t.Errorf("L=%d: no step gaps for a PaTH model", L)
				}
			}
		})
	}
}

package planner

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"routebench/internal/corpustest"
	"routebench/pipeline"
	"routebench/stages/evaluate"
	"routebench/stages/tokenize"
	"routebench/stages/tokenize/shards"
)

// The default corpus's tokenize keys, as main computed them before the
// evaluation-only mode existed (sha256 of the canonical config the stage
// hashes; smoke and cpu share one, the byte tokenizer's), and the sha256 of
// the byte tokenizer's manifest.json, which lists every shard's sha256. If
// one changes, the shards change and every model retrains (hours): a
// change here must be deliberate. cpu's changed deliberately on
// 2026-12-06 (claims v3: 8 held-out books, planner.cpuHeldOut).
var defaultTokenizeKeys = map[string]string{
	"smoke": "64b209cc1a48386f50b6f2c8517f88a85863d41f0025ecdd61341ebc88d74613",
	"cpu":   "5d633a8857213b4a132724db85240a06dbff2bae87aad346e7d5c2cce61ef7d4",
	"paper": "8f4d57b2d53512e0d6a93cfab5a659d3b2d58b16c9dfe2a617e5a24e59ae8db1",
}

const defaultBytesManifest = "f085336e91d5a4a4e17b9a96af2e4dadb5640f0a4cc8ebafae0ae53945e85bed"

// TestDefaultTokenizeKeysUnchanged: evaluation corpora and protocols add
// stages; the ordinary tokenize stage of the default corpus keeps its key
// and writes the same bytes.
func TestDefaultTokenizeKeysUnchanged(t *testing.T) {
	corpus := tinyCorpus(t)
	for name, want := range defaultTokenizeKeys {
		p, err := LoadProfile(name, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, extra := range []bool{false, true} {
			if extra {
				p.EvalCorpora, p.EvalProtocols = []string{corpus}, []string{"in-document", "sliding:16"}
			}
			plan, err := Build(p)
			if err != nil {
				corpustest.Missing(t, err)
			}
			s, _ := plan.Stage("tokenize")
			b, err := pipeline.CanonicalConfig(s.Config)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != want {
				t.Errorf("%s (eval corpora and protocols: %v): the default tokenize config is %s, sha256 %s; want %s (unchanged)", name, extra, b, got, want)
			}
		}
	}
	out := t.TempDir()
	if err := tokenize.Run(context.Background(), tokenize.DefaultConfig(tokenize.TokenizerBytes), out, nil); err != nil {
		t.Fatal(err)
	}
	m, err := os.ReadFile(filepath.Join(out, shards.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", sha256.Sum256(m)); got != defaultBytesManifest {
		t.Errorf("the default corpus's byte shards changed: manifest.json sha256 %s, want %s", got, defaultBytesManifest)
	}
}

// stageKeys computes every stage's key with a stand-in digest for each
// input (what it gets when the input's key, and so its output, is
// unchanged), keyed by stage name.
func stageKeys(t *testing.T, plan *pipeline.Plan) map[string]string {
	t.Helper()
	keys := map[string]string{}
	for _, s := range plan.Stages {
		digests := map[string]string{}
		for _, in := range s.Inputs {
			digests[in.Name] = "output of " + in.Stage.Name
		}
		k, err := pipeline.ComputeKey(s, digests)
		if err != nil {
			t.Fatal(err)
		}
		keys[s.Name] = k.ID.String()
	}
	return keys
}

// TestEvalCorpusKeepsShardsAndModels: evaluation corpora add a tokenize
// stage each (evaluation-only, its own key) and an evaluate stage per
// variant that reads that stage's shards and the same train stage's
// weights; no tokenize or train key changes, so nothing retrains.
func TestEvalCorpusKeepsShardsAndModels(t *testing.T) {
	corpus := tinyCorpus(t)
	other := filepath.Join(t.TempDir(), "wiki.jsonl")
	if err := os.WriteFile(other, []byte(`{"text":"a document"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, profile := range []string{"smoke", "cpu"} {
		p, err := LoadProfile(profile, "")
		if err != nil {
			t.Fatal(err)
		}
		p.Corpus = []string{corpus}
		before, err := Build(p)
		if err != nil {
			t.Fatal(err)
		}
		p.EvalCorpora = []string{other, "books=" + corpus}
		after, err := Build(p)
		if err != nil {
			t.Fatal(err)
		}
		k0, k1 := stageKeys(t, before), stageKeys(t, after)
		for name, k := range k0 {
			if strings.HasPrefix(name, "tokenize") || strings.HasPrefix(name, "train/") || strings.HasPrefix(name, "evaluate/") {
				if k1[name] != k {
					t.Errorf("%s: %s is re-keyed by adding evaluation corpora", profile, name)
				}
			}
		}
		for _, c := range []string{"wiki.jsonl", "books"} {
			tok, ok := after.Stage("tokenize@" + c)
			if !ok {
				t.Fatalf("%s: no tokenize@%s stage", profile, c)
			}
			key := tok.Config.(tokenize.Key)
			if !key.EvalOnly || key.Tokenizer != p.Tokenizer || len(key.HeldOut) != 0 || key.ValFraction != 0 {
				t.Errorf("%s: tokenize@%s key %+v: want evaluation-only with the profile's tokenizer", profile, c, key)
			}
			if k1["tokenize@"+c] == k1["tokenize"] {
				t.Errorf("%s: tokenize@%s has the training tokenize key", profile, c)
			}
			for _, v := range []string{"rope", "alibi"} {
				ev, ok := after.Stage("evaluate/" + v + "@" + c)
				if !ok {
					t.Fatalf("%s: no evaluate/%s@%s stage", profile, v, c)
				}
				tr, _ := after.Stage("train/" + v)
				ins := map[string]*pipeline.Stage{}
				for _, in := range ev.Inputs {
					ins[in.Name] = in.Stage
				}
				if ins[shards.Input] != tok || ins[evaluate.WeightsInput] != tr || len(ins) != 2 {
					t.Errorf("%s: evaluate/%s@%s reads %v; want tokenize@%s's shards and train/%s's weights", profile, v, c, ins, c, v)
				}
				if cfg := ev.Config.(evaluate.Config); cfg.Corpus != c {
					t.Errorf("%s: evaluate/%s@%s config names corpus %q", profile, v, c, cfg.Corpus)
				}
			}
		}
		rep, _ := after.Stage(ReportStage)
		found, trained := 0, 0
		for _, in := range rep.Inputs {
			if strings.HasPrefix(in.Stage.Name, "evaluate/") && (strings.HasSuffix(in.Stage.Name, "@wiki.jsonl") || strings.HasSuffix(in.Stage.Name, "@books")) {
				found++ // a profile with seeds has evaluate/<v>@seed<N>@<corpus> too
			}
			if in.Stage.Kind == "train" {
				trained++
			}
		}
		if found != 2*trained || trained == 0 {
			t.Errorf("%s: the report reads %d evaluation-corpus results of %d trained variants, want 2 each", profile, found, trained)
		}
	}
}

func TestEvalCorpusNames(t *testing.T) {
	for entry, want := range map[string]evalCorpus{
		"/data/wiki.parquet":        {"wiki.parquet", "/data/wiki.parquet"},
		"/data/owt/":                {"owt", "/data/owt/"},
		"/data/owt/*.parquet":       {"owt__.parquet", "/data/owt/*.parquet"},
		"sotu=/data/sotu/*.txt":     {"sotu", "/data/sotu/*.txt"},
		"my book (2nd ed).txt":      {"my_book__2nd_ed_.txt", "my book (2nd ed).txt"},
		"./a=b.txt":                 {"a_b.txt", "./a=b.txt"},
		"books.v2=../corpora/books": {"books.v2", "../corpora/books"},
	} {
		got, err := parseEvalCorpus(entry)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", entry, got, err, want)
		}
	}
	for _, bad := range []string{"", "bad name=x.txt", "x="} {
		if _, err := parseEvalCorpus(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	p, _ := LoadProfile("smoke", "")
	p.Corpus, p.EvalCorpora = []string{tinyCorpus(t)}, []string{"/a/wiki.txt", "/b/wiki.txt"}
	if _, err := Build(p); err == nil || !strings.Contains(err.Error(), `both named "wiki.txt"; name one: --eval-corpus NAME=PATH`) {
		t.Errorf("two corpora of one name: %v", err)
	}
}

// Protocols come from the profile (--set or --config) into every evaluate
// stage; a bad one is a one-line error listing the valid ones.
func TestEvalProtocolsFromProfile(t *testing.T) {
	corpus := tinyCorpus(t)
	p, err := LoadProfileWith("smoke", Overrides{Set: []string{"eval_protocols=in-document,sliding:16"}, Corpus: []string{corpus},
		EvalCorpus: []string{corpus}})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range plan.Stages {
		if cfg, ok := s.Config.(evaluate.Config); ok {
			n++
			if strings.Join(cfg.Protocols, " ") != "in-document sliding:16" {
				t.Errorf("%s: protocols %v", s.Name, cfg.Protocols)
			}
		}
	}
	if n == 0 {
		t.Fatal("no evaluate stage")
	}
	_, err = LoadProfileWith("smoke", Overrides{Set: []string{"eval_protocols=sliding:0"}})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), `"in-document", "sliding:S" and "in-document+sliding:S"`) {
		t.Errorf("a bad protocol: %v", err)
	}
}

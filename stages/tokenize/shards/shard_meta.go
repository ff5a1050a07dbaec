package shards

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// Schema metadata keys of a shard, in the order they are written. The reader
// relies on these alone (never on file names).
const (
	keyFormat        = "routebench.format"        // FormatVersion
	keyDataset       = "routebench.dataset"       // id shared by all shards of one Run
	keyTokenizer     = "routebench.tokenizer"     // "bytes" | "gpt2"
	keyVocabSize     = "routebench.vocab_size"    // decimal
	keyEOT           = "routebench.eot_id"        // decimal
	keyTokenType     = "routebench.token_type"    // "uint16" | "int32"
	keySource        = "routebench.source"        // what the corpus was
	keyNormalisation = "routebench.normalisation" // the writer's normalisation rule
	keySplitRule     = "routebench.split_rule"    // how documents were assigned to splits
	keySplit         = "routebench.split"         // "train" | "heldout"
	keyShard         = "routebench.shard"         // index of this shard within its split, from 0
	keyStart         = "routebench.start"         // offset of this shard's first token in the split stream
	keyTokens        = "routebench.tokens"        // tokens in this shard
	keyLast          = "routebench.last"          // "true" on the split's last shard
	keyDocuments     = "routebench.documents"     // JSON array of DocEntry: documents ending in this shard
)

var shardKeys = []string{keyFormat, keyDataset, keyTokenizer, keyVocabSize, keyEOT, keyTokenType, keySource,
	keyNormalisation, keySplitRule, keySplit, keyShard, keyStart, keyTokens, keyLast, keyDocuments}

// tokensField is the single column of a shard.
const tokensField = "tokens"

// DatasetMeta is what every shard of one Run shares.
type DatasetMeta struct {
	Format        string `json:"format"`
	Dataset       string `json:"dataset"`
	Tokenizer     string `json:"tokenizer"`
	VocabSize     int    `json:"vocab_size"`
	EOT           int    `json:"eot_id"`
	TokenType     string `json:"token_type"`
	Source        string `json:"source"`
	Normalisation string `json:"normalisation"`
	SplitRule     string `json:"split_rule"`
}

// ShardMeta is one shard's metadata.
type ShardMeta struct {
	DatasetMeta
	Split     string
	Index     int
	Start     int64
	Tokens    int64
	Last      bool
	Documents string // JSON, parsed only when asked for (OpenWebText shards list ~15K documents each)
}

// DocEntry is a document in shard metadata. Start is its first token's
// offset in the split stream; Tokens counts its end-of-document token (a
// split document's head has none).
type DocEntry struct {
	ID     string `json:"id"`
	Start  int64  `json:"start"`
	Tokens int64  `json:"tokens"`
	Norm   string `json:"norm,omitempty"` // "latin1", "crlf" or "latin1,crlf": what normalisation changed
	Part   string `json:"part,omitempty"` // a split document's "head" (train) or "tail" (held out); "" = whole
}

func TokenTypeFor(vocab int) (string, arrow.DataType) {
	if vocab <= 1<<16 {
		return "uint16", arrow.PrimitiveTypes.Uint16
	}
	return "int32", arrow.PrimitiveTypes.Int32
}

func (m ShardMeta) Schema() *arrow.Schema {
	_, typ := TokenTypeFor(m.VocabSize)
	values := []string{m.Format, m.Dataset, m.Tokenizer, strconv.Itoa(m.VocabSize), strconv.Itoa(m.EOT), m.TokenType,
		m.Source, m.Normalisation, m.SplitRule, m.Split, strconv.Itoa(m.Index), strconv.FormatInt(m.Start, 10),
		strconv.FormatInt(m.Tokens, 10), strconv.FormatBool(m.Last), m.Documents}
	md := arrow.NewMetadata(shardKeys, values)
	return arrow.NewSchema([]arrow.Field{{Name: tokensField, Type: typ}}, &md)
}

// parseShardMeta reads and checks a shard's metadata.
func parseShardMeta(md arrow.Metadata) (ShardMeta, error) {
	get := func(k string) (string, error) {
		i := md.FindKey(k)
		if i < 0 {
			return "", fmt.Errorf("metadata key %q is missing", k)
		}
		return md.Values()[i], nil
	}
	var m ShardMeta
	var err error
	str := func(k string, dst *string) {
		if err == nil {
			*dst, err = get(k)
		}
	}
	num := func(k string, dst *int64) {
		var s string
		str(k, &s)
		if err == nil {
			if *dst, err = strconv.ParseInt(s, 10, 64); err != nil {
				err = fmt.Errorf("metadata key %q: %w", k, err)
			}
		}
	}
	str(keyFormat, &m.Format)
	if err == nil && m.Format != FormatVersion {
		return m, fmt.Errorf("format %q, this reader knows %q", m.Format, FormatVersion)
	}
	var vocab, eot, index int64
	var last string
	str(keyDataset, &m.Dataset)
	str(keyTokenizer, &m.Tokenizer)
	num(keyVocabSize, &vocab)
	num(keyEOT, &eot)
	str(keyTokenType, &m.TokenType)
	str(keySource, &m.Source)
	str(keyNormalisation, &m.Normalisation)
	str(keySplitRule, &m.SplitRule)
	str(keySplit, &m.Split)
	num(keyShard, &index)
	num(keyStart, &m.Start)
	num(keyTokens, &m.Tokens)
	str(keyLast, &last)
	str(keyDocuments, &m.Documents)
	if err != nil {
		return m, err
	}
	m.VocabSize, m.EOT, m.Index = int(vocab), int(eot), int(index)
	if m.Last, err = strconv.ParseBool(last); err != nil {
		return m, fmt.Errorf("metadata key %q: %w", keyLast, err)
	}
	if want, _ := TokenTypeFor(m.VocabSize); m.TokenType != want {
		return m, fmt.Errorf("token type %q for vocabulary %d, want %q", m.TokenType, m.VocabSize, want)
	}
	if m.Split != SplitTrain && m.Split != SplitHeldOut {
		return m, fmt.Errorf("unknown split %q", m.Split)
	}
	return m, nil
}

func MarshalDocs(docs []DocEntry) (string, error) {
	if docs == nil {
		docs = []DocEntry{}
	}
	b, err := json.Marshal(docs)
	return string(b), err
}

package export

import (
	"fmt"

	"routebench/stages/tokenize/shards"
)

// Tokenizer is config.json's "tokenizer": what a user needs to turn text
// into the ids the model was trained on and back, read from the train
// stage's own tokenize stage (its shards' metadata), never assumed.
type Tokenizer struct {
	// Kind: "bytes" (id = byte value) or "gpt2" (GPT-2's BPE).
	Kind      string `json:"kind"`
	VocabSize int    `json:"vocab_size"`
	// SpecialIDs: ids that stand for no text; "end_of_document" follows
	// every document's last token.
	SpecialIDs map[string]int `json:"special_ids"`
	// Encoding: how text becomes ids, in words.
	Encoding string `json:"encoding"`
	// Normalisation: what the tokenize stage did to text before encoding.
	Normalisation string `json:"normalisation"`
}

// tokenizer kinds as the tokenize stage names them (stages/tokenize's
// TokenizerBytes and TokenizerGPT2).
const (
	tokenizerBytes = "bytes"
	tokenizerGPT2  = "gpt2"
)

// TokenizerOf describes the tokenizer that made a dataset's shards.
func TokenizerOf(info shards.Info) (Tokenizer, error) {
	t := Tokenizer{Kind: info.Tokenizer, VocabSize: info.VocabSize, SpecialIDs: map[string]int{"end_of_document": int(info.EOT)},
		Normalisation: info.Normalisation}
	switch info.Tokenizer {
	case tokenizerBytes:
		if info.VocabSize != 257 || info.EOT != 256 {
			return Tokenizer{}, fmt.Errorf("the bytes tokenizer's shards say %d ids and end of document %d, not 257 and 256: the tokenize stage's output is damaged", info.VocabSize, info.EOT)
		}
		t.Encoding = "the text's UTF-8 bytes, each byte's value its id (0..255); decoding: the bytes of the ids below 256, read as UTF-8"
	case tokenizerGPT2:
		t.Encoding = "GPT-2's byte-level BPE (tiktoken's r50k_base, encode_ordinary: special-token text in a document is encoded as text)"
	default:
		return Tokenizer{}, fmt.Errorf("the shards name tokenizer %q, which export cannot describe: add it to interop/export/tokenizer.go", info.Tokenizer)
	}
	return t, nil
}

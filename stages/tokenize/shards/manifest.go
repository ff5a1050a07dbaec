package shards

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ManifestName is the file tokenize.Run writes beside the shards.
const ManifestName = "manifest.json"

// Manifest is manifest.json: the totals of a tokenize.Run and its shard files. It
// holds no timestamps or durations, so identical runs give identical bytes.
type Manifest struct {
	DatasetMeta
	// Config is the key the tokenize stage hashed (its tokenize.Key), kept
	// as written: a reader never needs the writer's settings, only their record.
	Config       json.RawMessage          `json:"config"`
	InputFiles   int                      `json:"input_files"`
	InputBytes   int64                    `json:"input_bytes"`
	SkippedEmpty int                      `json:"skipped_empty_documents"`
	Normalised   map[string]int           `json:"normalised_documents"` // "latin1", "crlf": documents changed
	HeldOutFiles map[string]int64         `json:"held_out_file_tokens,omitempty"`
	HeldOut      ManifestHeldOut          `json:"held_out"`
	Splits       map[string]ManifestSplit `json:"splits"`
}

// ManifestSplit is one split's totals and shard files.
type ManifestSplit struct {
	Tokens    int64           `json:"tokens"`
	Documents int             `json:"documents"`
	Shards    []ManifestShard `json:"shards"`
}

// ManifestHeldOut records how the held-out split was chosen; the split's
// totals are in Splits.
type ManifestHeldOut struct {
	Rule        string                 `json:"rule"`                         // HeldOutByFiles, HeldOutByFraction, HeldOutByTopUp or HeldOutAll
	MinTokens   int64                  `json:"min_tokens,omitempty"`         // MinHeldOutTokens
	ByFraction  int                    `json:"fraction_documents,omitempty"` // documents below ValFraction
	TopUp       int                    `json:"top_up_documents,omitempty"`   // documents the top-up held out whole
	TopUpTokens int64                  `json:"top_up_tokens,omitempty"`      // their tokens
	Split       *ManifestSplitDocument `json:"split_document,omitempty"`     // the document cut by the top-up, if any
}

// ManifestSplitDocument is a document whose head trains and whose tail is
// held out (both splits list it, with Part "head" and "tail"; each split's
// Documents counts it).
type ManifestSplitDocument struct {
	ID            string `json:"id"`
	TrainTokens   int64  `json:"train_tokens"`    // the head, without an end-of-document token
	HeldOutTokens int64  `json:"held_out_tokens"` // the tail, ending with the end-of-document token
}

// ManifestShard is one shard file.
type ManifestShard struct {
	File   string `json:"file"`
	Index  int    `json:"index"`
	Start  int64  `json:"start"`
	Tokens int64  `json:"tokens"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

func (m *Manifest) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "CRLF -> LF" readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("shards: manifest: %w", err)
	}
	return buf.Bytes(), nil
}

// parseManifest reads manifest.json; ok is false if b is not one (a shard).
func parseManifest(b []byte) (m *Manifest, ok bool, err error) {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, false, nil
	}
	m = new(Manifest)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, true, fmt.Errorf("not a valid %s: %w", ManifestName, err)
	}
	if m.Format != FormatVersion {
		return nil, true, fmt.Errorf("%s has format %q, this reader knows %q", ManifestName, m.Format, FormatVersion)
	}
	return m, true, nil
}

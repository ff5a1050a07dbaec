package tokenize

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// tokenizerSpec describes a tokenizer; newEncoder gives each worker its own
// encoder so that workers share no mutable state.
type tokenizerSpec struct {
	name       string
	vocab      int    // number of ids, end-of-document included
	eot        uint32 // end-of-document id, appended after every document
	newEncoder func() (encoder, error)
	// pieceBytes is the size documents are cut into for parallel encoding;
	// 0 means documents are never cut.
	pieceBytes int
}

// encoder appends the token ids of text to dst.
type encoder func(dst []uint32, text string) ([]uint32, error)

func newTokenizer(name string) (tokenizerSpec, error) {
	switch name {
	case TokenizerBytes:
		// Any cut is safe for bytes; cutting bounds a piece's []uint32 (4 bytes
		// per input byte) and lets workers share the bible.
		return tokenizerSpec{name: name, vocab: 257, eot: 256, newEncoder: newByteEncoder, pieceBytes: 1 << 20}, nil
	case TokenizerGPT2:
		return tokenizerSpec{name: name, vocab: 50257, eot: 50256, newEncoder: newGPT2Encoder, pieceBytes: 64 << 10}, nil
	}
	return tokenizerSpec{}, fmt.Errorf("tokenize: unknown tokenizer %q (want %q or %q)", name, TokenizerBytes, TokenizerGPT2)
}

func newByteEncoder() (encoder, error) {
	return func(dst []uint32, text string) ([]uint32, error) {
		dst = slices.Grow(dst, len(text))
		for i := 0; i < len(text); i++ {
			dst = append(dst, uint32(text[i]))
		}
		return dst, nil
	}, nil
}

// gpt2CacheEntries bounds a worker's piece cache (~100 bytes an entry).
// English needs far fewer distinct pieces; past the bound pieces are
// still encoded, just not remembered, so the output never depends on it.
const gpt2CacheEntries = 1 << 18

func newGPT2Encoder() (encoder, error) {
	// R50kBase is the GPT-2 vocabulary (tiktoken "gpt2"); its Encode never
	// matches special tokens, which is tiktoken's encode_ordinary.
	codec, err := tokenizer.Get(tokenizer.R50kBase)
	if err != nil {
		return nil, fmt.Errorf("tokenize: loading the GPT-2 vocabulary: %w", err)
	}
	encode := func(dst []uint32, text string) ([]uint32, error) {
		ids, _, err := codec.Encode(text)
		if err != nil {
			return dst, fmt.Errorf("gpt2 encode: %w", err)
		}
		dst = slices.Grow(dst, len(ids))
		for _, id := range ids {
			dst = append(dst, uint32(id))
		}
		return dst, nil
	}
	// Text is split into pieces here (gpt2Split) and each distinct piece is
	// encoded once by the library and remembered: byte-pair merges never
	// cross pieces, and a piece encoded alone is split by the library into
	// itself again, so the ids are the library's for the whole text.
	cache := map[string][]uint32{}
	return func(dst []uint32, text string) ([]uint32, error) {
		if !utf8.ValidString(text) {
			return encode(dst, text) // never after normalize; keep the library's handling
		}
		var err error
		gpt2Split(text, func(piece string) {
			if err != nil {
				return
			}
			if ids, ok := cache[piece]; ok {
				dst = append(dst, ids...)
				return
			}
			n := len(dst)
			if dst, err = encode(dst, piece); err != nil {
				return
			}
			if len(cache) < gpt2CacheEntries {
				cache[strings.Clone(piece)] = slices.Clone(dst[n:])
			}
		})
		return dst, err
	}, nil
}

// cutPieces cuts text into pieces of about size bytes that encode to the same
// ids separately as together. size <= 0 returns text whole.
//
// A cut is made only where both neighbouring bytes are printable non-space
// ASCII around a single "\n" or " ". The GPT-2 pre-tokenizer
// ('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)
// only looks forward and never puts a non-space character in the same piece
// as a following whitespace character, so at such a point a piece ends
// (before the space, or after the newline) and the next one starts fresh; the
// only look-ahead, (?!\S), can change which alternative matches the lone "\n"
// at the end of a piece but not the piece itself. BPE merges stay inside
// pieces. TestCutPiecesMatchesWholeEncoding checks this on real books.
func cutPieces(text string, size int) []string {
	if size <= 0 || len(text) <= size {
		return []string{text}
	}
	var pieces []string
	for len(text) > size {
		cut := safeCut(text, size)
		if cut <= 0 {
			break
		}
		pieces = append(pieces, text[:cut])
		text = text[cut:]
	}
	return append(pieces, text)
}

// safeCut returns a cut point at or after size (see cutPieces), or 0 if the
// rest of text has none.
func safeCut(text string, size int) int {
	printable := func(b byte) bool { return b > ' ' && b < 0x7f }
	spaceCut := 0
	for i := size; i+1 < len(text); i++ {
		switch text[i] {
		case '\n':
			if printable(text[i-1]) && printable(text[i+1]) {
				return i + 1 // the piece keeps its "\n"
			}
		case ' ':
			// Prefer a line break; take a space cut if none comes soon.
			if spaceCut == 0 && printable(text[i-1]) && printable(text[i+1]) {
				spaceCut = i // the next piece starts with " word"
			}
		}
		if spaceCut > 0 && i-size > 4096 {
			return spaceCut
		}
	}
	return spaceCut
}

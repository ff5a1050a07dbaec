package tokenize

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// normalisationRule is recorded in every shard; keep it in step with normalize.
const normalisationRule = "valid UTF-8 kept byte for byte (no Unicode normalisation); " +
	"a file or value that is not valid UTF-8 is decoded as ISO-8859-1 as a whole; " +
	"CRLF -> LF (lone CR kept); empty documents skipped"

// normalize returns text as valid UTF-8 with LF line ends, and a note of what
// it changed ("", "latin1", "crlf" or "latin1,crlf") for the document entry.
// It may return raw itself when nothing changes.
func normalize(raw []byte) (text []byte, note string) {
	text = raw
	latin1 := !utf8.Valid(raw)
	if latin1 {
		// ISO-8859-1 maps each byte to the code point of the same value, so
		// every byte sequence decodes; that is why it is the fallback.
		out := make([]byte, 0, len(raw)+len(raw)/8)
		for _, b := range raw {
			out = utf8.AppendRune(out, rune(b))
		}
		text = out
	}
	crlf := bytes.Contains(text, []byte("\r\n"))
	if crlf {
		text = bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n"))
	}
	switch {
	case latin1 && crlf:
		note = "latin1,crlf"
	case latin1:
		note = "latin1"
	case crlf:
		note = "crlf"
	}
	return text, note
}

// binaryReason says why raw does not look like text, or "" if it does. A NUL
// byte never occurs in text files; a high share of other control bytes means
// an image, an archive or an executable was given by mistake.
func binaryReason(raw []byte) string {
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		return fmt.Sprintf("holds a NUL byte at offset %d", i)
	}
	valid := utf8.Valid(raw)
	control := 0
	for _, b := range raw {
		switch {
		case b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r' || b == 0x1b:
		case b < 0x20 || b == 0x7f:
			control++
		case !valid && b >= 0x80 && b < 0xa0: // C1 controls once read as ISO-8859-1
			control++
		}
	}
	if control*10 > len(raw) {
		return fmt.Sprintf("is mostly non-text (%d of %d bytes are control characters)", control, len(raw))
	}
	return ""
}

package tokenize

import (
	"unicode"
	"unicode/utf8"
)

// gpt2Split calls yield with each piece of s as GPT-2's pre-tokenizer splits
// it. The pattern (tiktoken r50k_base, run by tiktoken-go through regexp2):
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// with \s = unicode.IsSpace and \p{L}, \p{N} = Go's Unicode categories, as
// regexp2 defines them. It is hand-written because regexp2 allocates a match
// object per piece: that allocation (and its garbage collection) was half of
// the GPT-2 encoder's time and kept two workers from running twice as fast.
// s must be valid UTF-8 (regexp2 would see U+FFFD for an invalid byte).
// TestGPT2SplitMatchesRegexp compares it with regexp2 on books and on
// Unicode corner cases.
func gpt2Split(s string, yield func(piece string)) {
	for i := 0; i < len(s); {
		n := gpt2PieceLen(s[i:])
		yield(s[i : i+n])
		i += n
	}
}

// Character classes of the pattern.
const (
	classSpace = iota
	classLetter
	classNumber
	classOther
)

func classOf(r rune) int {
	if r < utf8.RuneSelf { // ASCII fast path, same answers as below
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			return classLetter
		case r >= '0' && r <= '9':
			return classNumber
		case r == ' ' || r >= '\t' && r <= '\r':
			return classSpace
		}
		return classOther
	}
	switch {
	case unicode.IsSpace(r):
		return classSpace
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	}
	return classOther
}

// runEnd returns the end of the run of class c starting at byte i of s.
func runEnd(s string, i, c int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if classOf(r) != c {
			break
		}
		i += n
	}
	return i
}

// gpt2PieceLen is the length in bytes of the piece at the start of s (s is
// not empty): the first alternative of the pattern that matches, as the
// regexp engine tries them in order.
func gpt2PieceLen(s string) int {
	// 's 't 're 've 'm 'll 'd
	if s[0] == '\'' && len(s) >= 2 {
		switch s[1] {
		case 's', 't', 'm', 'd':
			return 2
		case 'r', 'v':
			if len(s) >= 3 && s[2] == 'e' {
				return 3
			}
		case 'l':
			if len(s) >= 3 && s[2] == 'l' {
				return 3
			}
		}
	}
	r0, n0 := utf8.DecodeRuneInString(s)
	c0 := classOf(r0)
	// " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+" with the optional space.
	if r0 == ' ' && len(s) > 1 {
		r1, _ := utf8.DecodeRuneInString(s[1:])
		if c1 := classOf(r1); c1 != classSpace {
			return runEnd(s, 1, c1)
		}
	}
	// The same without it.
	if c0 != classSpace {
		return runEnd(s, n0, c0)
	}
	// "\s+(?!\S)": the whitespace run, less its last character if a
	// non-space follows (that character then starts the next piece, e.g. the
	// space of " word"); "\s+": a single whitespace character before a
	// non-space.
	end := runEnd(s, n0, classSpace)
	if end == len(s) {
		return end
	}
	_, last := utf8.DecodeLastRuneInString(s[:end])
	if end-last > 0 {
		return end - last
	}
	return end
}

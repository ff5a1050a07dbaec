package tokenize

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func encodeAll(t *testing.T, name, text string) []uint32 {
	t.Helper()
	tok, err := newTokenizer(name)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := tok.newEncoder()
	if err != nil {
		t.Fatal(err)
	}
	ids, err := enc(nil, text)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// Reference ids from OpenAI's GPT-2 vocabulary (tiktoken "gpt2").
func TestGPT2KnownIDs(t *testing.T) {
	cases := []struct {
		text string
		want []uint32
	}{
		{"hello world", []uint32{31373, 995}},
		{"Hello, world!", []uint32{15496, 11, 995, 0}},
		{"\n", []uint32{198}},
		{" the", []uint32{262}},
		// Ordinary encoding: special-token text is plain text, never id 50256.
		{"<|endoftext|>", []uint32{27, 91, 437, 1659, 5239, 91, 29}},
	}
	for _, c := range cases {
		if got := encodeAll(t, TokenizerGPT2, c.text); !slices.Equal(got, c.want) {
			t.Errorf("gpt2(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	tok, _ := newTokenizer(TokenizerGPT2)
	if tok.vocab != 50257 || tok.eot != 50256 {
		t.Errorf("gpt2 vocab %d eot %d, want 50257 50256", tok.vocab, tok.eot)
	}
}

func TestBytesTokenizer(t *testing.T) {
	got := encodeAll(t, TokenizerBytes, "A\xff\n")
	if !slices.Equal(got, []uint32{65, 255, 10}) {
		t.Errorf("bytes = %v", got)
	}
	tok, _ := newTokenizer(TokenizerBytes)
	if tok.vocab != 257 || tok.eot != 256 {
		t.Errorf("bytes tokenizer %+v", tok)
	}
	if _, err := newTokenizer("sentencepiece"); err == nil || !strings.Contains(err.Error(), `"bytes"`) {
		t.Errorf("unknown tokenizer error = %v", err)
	}
}

// cutPieces must never change the ids: encoding the pieces one by one must
// equal encoding the whole text (the reference).
func checkCutsPreserveIDs(t *testing.T, text string, size int) int {
	t.Helper()
	whole := encodeAll(t, TokenizerGPT2, text)
	pieces := cutPieces(text, size)
	if strings.Join(pieces, "") != text {
		t.Fatalf("pieces do not concatenate to the text")
	}
	var cut []uint32
	for _, p := range pieces {
		cut = append(cut, encodeAll(t, TokenizerGPT2, p)...)
	}
	if !slices.Equal(whole, cut) {
		i := 0
		for i < len(whole) && i < len(cut) && whole[i] == cut[i] {
			i++
		}
		t.Fatalf("cut encoding differs from whole encoding at token %d (%d pieces of ~%d bytes)", i, len(pieces), size)
	}
	return len(pieces)
}

func TestCutPiecesMatchesWholeEncoding(t *testing.T) {
	// Awkward neighbours: double newlines, indentation, trailing spaces,
	// contractions, digits, punctuation runs, non-ASCII letters.
	var b strings.Builder
	lines := []string{"It's 1999, isn't it?", "  indented line", "", "trailing space ", "Ünïcödé wörds—and “quotes”.",
		"x\ty", "'ll 've 're", "...!!!", "42 43 44", "end.", "\u00a0nbsp", "a b  c   d"}
	for i := 0; i < 400; i++ {
		b.WriteString(lines[i%len(lines)])
		b.WriteString([]string{"\n", " ", "\n\n", "  "}[i%4])
	}
	text := b.String()
	for _, size := range []int{7, 31, 64, 200} {
		if n := checkCutsPreserveIDs(t, text, size); n < 2 {
			t.Errorf("size %d: only %d pieces; the test exercises nothing", size, n)
		}
	}
}

func TestCutPiecesOnBooks(t *testing.T) {
	dir := defaultBooksDir(t)
	books := []string{"carroll-alice.txt", "shakespeare-caesar.txt", "bryant-stories.txt"}
	if !testing.Short() {
		books = append(books, "austen-emma.txt", "melville-moby_dick.txt", "whitman-leaves.txt")
	}
	for _, name := range books {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		text, _ := normalize(raw)
		if n := checkCutsPreserveIDs(t, string(text), 4096); n < 10 {
			t.Errorf("%s: only %d pieces", name, n)
		}
	}
}

func TestSafeCutNoneAvailable(t *testing.T) {
	text := strings.Repeat("\n\n", 100)
	if got := cutPieces(text, 10); len(got) != 1 {
		t.Errorf("whitespace-only text cut into %d pieces; no cut is safe there", len(got))
	}
}

package tokenize

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer"
	"routebench/internal/seeds"
)

// gpt2Pattern is tiktoken-go's r50k_base split pattern, compiled here with
// regexp2 as the reference for gpt2Split.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

func regexpPieces(t testing.TB, s string) []string {
	t.Helper()
	re := regexp2.MustCompile(gpt2Pattern, regexp2.None)
	var out []string
	m, err := re.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func splitPieces(s string) []string {
	var out []string
	gpt2Split(s, func(p string) { out = append(out, p) })
	return out
}

// Unicode corner cases: every class boundary the pattern has, in scripts
// where \p{L}, \p{N} and \s are not ASCII.
var gpt2Torture = []string{
	"", " ", "  ", "\n", " \n ", "a  b", "a \n b", "a\n\nb", "  word", "\t\tx", "x  ", "x\n",
	"it's 'tis we're I've I'm you'll he'd 'S 'x ''s '", "don't!'s", "a'sb",
	"1,234.5 ²³ ½ Ⅻ ٣٤ 　全角　スペース", "日本語のテキスト。句読点、",
	"e\u0301te\u0301 (combining accents)", "naïve café", "\u00a0nbsp\u00a0 x", "\u2028line\u2029para",
	"emoji 😀😀 x", "tab\there", "mixed123abc", " 123", " !!", "!!! ???", "\r\n\r\nCRLF",
	"\u0085next line", "x\u200by zero width", "\x00\x01control\x1b[0m", "Ωμέγα Ελληνικά", "עברית ערבית العربية",
}

func TestGPT2SplitMatchesRegexp(t *testing.T) {
	want := []string{"it", "'s", " ", " a", "\n", "\n", "b", " 42", "!!", "  "}
	if got := regexpPieces(t, "it's  a\n\nb 42!!  "); !slices.Equal(got, want) {
		t.Fatalf("reference split %q, want %q", got, want)
	}
	texts := append([]string(nil), gpt2Torture...)
	texts = append(texts, strings.Join(gpt2Torture, " "), strings.Join(gpt2Torture, "\n"), strings.Join(gpt2Torture, ""))
	for _, s := range texts {
		if got, want := splitPieces(s), regexpPieces(t, s); !slices.Equal(got, want) {
			t.Errorf("split %q:\n got %q\nwant %q", s, got, want)
		}
	}
}

// TestGPT2SplitRandom compares with regexp2 on seeded random strings over an
// alphabet of every class and the characters the pattern names.
func TestGPT2SplitRandom(t *testing.T) {
	alphabet := []rune("aZ'srtvemld 09\t\n\r\v\f.!?-_\u00a0\u0085\u2028\u3000é\u0301日²½Ⅻ٣😀\x00\x1b\ufeff")
	h := uint64(1)
	for range 3000 {
		var b strings.Builder
		h = seeds.Mix(h)
		for k := range int(h % 24) {
			b.WriteRune(alphabet[seeds.Mix(h+uint64(k))%uint64(len(alphabet))])
		}
		s := b.String()
		if got, want := splitPieces(s), regexpPieces(t, s); !slices.Equal(got, want) {
			t.Fatalf("split %q:\n got %q\nwant %q", s, got, want)
		}
	}
}

// TestGPT2EncoderMatchesLibrary compares whole-text ids with the library's
// own Encode, on the corner cases and on books (all 18 without -short).
func TestGPT2EncoderMatchesLibrary(t *testing.T) {
	codec, err := tokenizer.Get(tokenizer.R50kBase)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name, text string) {
		t.Helper()
		ids, _, err := codec.Encode(text)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]uint32, len(ids))
		for i, id := range ids {
			want[i] = uint32(id)
		}
		if got := encodeAll(t, TokenizerGPT2, text); !slices.Equal(got, want) {
			t.Errorf("%s: ids differ from the library's", name)
		}
	}
	for _, s := range gpt2Torture {
		check(s, s)
	}
	check("all corner cases", strings.Join(gpt2Torture, " x "))
	cache, err := (Config{}).cacheDir()
	if err != nil {
		return
	}
	dir := filepath.Join(cache, defaultCorpusSubdir, "package", "gutenberg")
	books, _ := filepath.Glob(filepath.Join(dir, "*.txt")) // none if the corpus is not fetched
	if testing.Short() && len(books) > 0 {
		books = []string{filepath.Join(dir, "carroll-alice.txt"), filepath.Join(dir, "bryant-stories.txt")}
	}
	for _, p := range books {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text, _ := normalize(raw)
		check(filepath.Base(p), string(text))
	}
}

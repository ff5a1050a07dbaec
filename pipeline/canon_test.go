package pipeline

import (
	"go/format"
	"go/token"
	"io/fs"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"routebench"
)

// A toy stage whose one package holds Go, an ignored generator, a file of
// another tag and assembly, in canonical layout.
var canonSource = fstest.MapFS{
	"stages/k/k.go": {Data: []byte(`package k

import (
	"math"
	"os"
)

// Scale is why the stage scales.
const Scale = 2.5

type pair struct {
	a    int
	bbbb float32
}

//go:noescape
func kern(x *float32)

func F(x []float32) float32 {
	s := float32(0) // a running sum
	for _, v := range x {
		s += v * Scale
	}
	_ = os.Args
	return s + float32(math.Pi)
}
`)},
	"stages/k/gen.go":    {Data: []byte("//go:build ignore\n\n// gen writes k_amd64.s.\npackage main\n\nimport _ \"routebench/stages/other\"\n\nfunc main() {}\n")},
	"stages/k/pure.go":   {Data: []byte("//go:build purego\n\npackage k\n\nfunc kernPure() int { return 1 }\n")},
	"stages/k/k_amd64.s": {Data: []byte("#include \"textflag.h\"\n\n// kern doubles x.\nTEXT ·kern(SB), NOSPLIT, $0-8\n\tMOVQ x+0(FP), AX /* the pointer */\n\tVADDPS Y0, Y0, Y0\n\tRET\n")},
}

var canonRoot = "routebench/stages/k"

func canonMods() *modDeps {
	return testMods(map[string][]string{canonRoot: nil}, nil)
}

// edit replaces old by new in one file of canonSource (old must occur).
func canonEdit(t *testing.T, file, old, new string) map[string]string {
	t.Helper()
	src := string(canonSource[file].Data)
	if !strings.Contains(src, old) {
		t.Fatalf("the test edits %q in %s, which it lacks", old, file)
	}
	return map[string]string{file: strings.Replace(src, old, new, 1)}
}

// What cannot change a result moves no key: comments of every kind, a
// reformat (gofmt's and a hand's: spacing, alignment, blank lines, import
// order, number literal case), an edit to a generator no build compiles,
// and asm comments or spacing.
func TestSaltIgnoresCommentsAndLayout(t *testing.T) {
	s0 := saltWith(t, canonSource, nil, canonMods(), canonRoot)
	k := "stages/k/k.go"
	for name, edits := range map[string]map[string]string{
		"a line comment":          canonEdit(t, k, "\tfor _, v", "\t// sum the scaled values\n\tfor _, v"),
		"a doc comment reworded":  canonEdit(t, k, "is why the stage scales", "is the factor, and the comment was wrong"),
		"a block comment":         canonEdit(t, k, "s += v", "s += /* scaled */ v"),
		"a trailing comment gone": canonEdit(t, k, " // a running sum", ""),
		"a package comment":       canonEdit(t, k, "package k", "// Package k is a toy.\npackage k"),
		"ungofmt'd spacing":       canonEdit(t, k, "s += v * Scale", "s+=v*Scale"),
		"alignment":               canonEdit(t, k, "\ta    int\n", "\ta int\n\n"),
		"blank lines":             canonEdit(t, k, "\treturn s", "\n\n\treturn s"),
		"import order":            canonEdit(t, k, "\t\"math\"\n\t\"os\"\n", "\t\"os\"\n\t\"math\"\n"),
		"one-line statements":     canonEdit(t, k, "\t_ = os.Args\n", "\t_ = os.Args;\n"),
		"the ignored generator":   canonEdit(t, "stages/k/gen.go", "func main() {}", "func main() { println(\"a new table\") }"),
		"an asm comment":          canonEdit(t, "stages/k/k_amd64.s", "// kern doubles x.", "// kern doubles x, in place."),
		"an asm block comment":    canonEdit(t, "stages/k/k_amd64.s", " /* the pointer */", ""),
		"asm spacing":             canonEdit(t, "stages/k/k_amd64.s", "\tVADDPS Y0, Y0, Y0", "    VADDPS  Y0,  Y0, Y0   "),
	} {
		if s1 := saltWith(t, canonSource, edits, canonMods(), canonRoot); s1 != s0 {
			t.Errorf("%s moved the key", name)
		}
	}
}

// The mutations: each edit can change what runs, and moves the key.
func TestSaltFollowsCodeChanges(t *testing.T) {
	s0 := saltWith(t, canonSource, nil, canonMods(), canonRoot)
	k := "stages/k/k.go"
	for name, edits := range map[string]map[string]string{
		"a constant":                 canonEdit(t, k, "2.5", "2.25"),
		"an operator":                canonEdit(t, k, "s += v * Scale", "s -= v * Scale"),
		"an identifier":              canonEdit(t, k, "math.Pi", "math.E"),
		"a directive removed":        canonEdit(t, k, "//go:noescape\n", ""),
		"a build constraint added":   canonEdit(t, k, "package k", "//go:build amd64\n\npackage k"),
		"a string's inner spaces":    canonEdit(t, k, "_ = os.Args", "_ = \"a  b\""),
		"a file of another tag":      canonEdit(t, "stages/k/pure.go", "return 1", "return 2"),
		"an asm instruction":         canonEdit(t, "stages/k/k_amd64.s", "VADDPS", "VMULPS"),
		"an asm operand":             canonEdit(t, "stages/k/k_amd64.s", "x+0(FP)", "x+8(FP)"),
		"a generator made buildable": canonEdit(t, "stages/k/gen.go", "//go:build ignore", "//go:build linux"),
	} {
		if name == "a generator made buildable" {
			// Its import then joins the closure: give the tree that package.
			edits["stages/other/o.go"] = "package other\n"
			mods := testMods(map[string][]string{canonRoot: nil, "routebench/stages/other": nil}, nil)
			if s1 := saltWith(t, canonSource, edits, mods, canonRoot); s1 == saltWith(t, canonSource, map[string]string{"stages/other/o.go": "package other\n"}, mods, canonRoot) {
				t.Errorf("%s did not move the key", name)
			}
			continue
		}
		if s1 := saltWith(t, canonSource, edits, canonMods(), canonRoot); s1 == s0 {
			t.Errorf("%s did not move the key", name)
		}
	}
}

// A cgo preamble is code: editing it moves the key; other comments of the
// same file do not.
func TestSaltKeepsCgoPreamble(t *testing.T) {
	src := "package k\n\n// #include <math.h>\n// static double half(double x) { return x / 2; }\nimport \"C\"\n\n// Half is why.\nfunc Half(x float64) float64 { return float64(C.half(C.double(x))) }\n"
	tree := fstest.MapFS{"stages/k/c.go": {Data: []byte(src)}}
	s0 := saltWith(t, tree, nil, canonMods(), canonRoot)
	if s1 := saltWith(t, tree, map[string]string{"stages/k/c.go": strings.Replace(src, "x / 2", "x / 3", 1)}, canonMods(), canonRoot); s1 == s0 {
		t.Error("editing the cgo preamble did not move the key")
	}
	if s1 := saltWith(t, tree, map[string]string{"stages/k/c.go": strings.Replace(src, "Half is why", "Half halves", 1)}, canonMods(), canonRoot); s1 != s0 {
		t.Error("editing a doc comment of a cgo file moved the key")
	}
}

// anyBuildCompiles: only a constraint no tag assignment satisfies (with
// "ignore" unset) leaves a file out.
func TestAnyBuildCompiles(t *testing.T) {
	for c, want := range map[string]bool{
		"":                            true,
		"//go:build ignore":           false,
		"//go:build ignore && amd64":  false,
		"//go:build !ignore":          true,
		"//go:build amd64 && !purego": true,
		"//go:build purego":           true,
		"//go:build amd64 && !amd64":  false,
		"//go:build ignore || noxla":  true,
	} {
		src := c + "\n\npackage k\n"
		canon, _, err := canonicalGo(token.NewFileSet(), "k.go", []byte(src))
		if err != nil {
			t.Fatalf("%q: %v", c, err)
		}
		if got := canon != nil; got != want {
			t.Errorf("%q: counted %v, want %v", c, got, want)
		}
	}
}

// On the real source: every Go file the salt counts has the canonical form
// of its gofmt'd self and of itself with a comment after every line that
// ends in a brace, so no file of the tree relies on a layout.
func TestEmbeddedCanonicalIgnoresComments(t *testing.T) {
	n := 0
	err := fs.WalkDir(routebench.Source, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".go" || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "/testdata/") {
			return err
		}
		src, err := fs.ReadFile(routebench.Source, p)
		if err != nil {
			return err
		}
		c0, _, err := canonicalGo(token.NewFileSet(), p, src)
		if err != nil || c0 == nil {
			return err
		}
		formatted, err := format.Source(src)
		if err != nil {
			t.Errorf("%s: gofmt: %v", p, err)
			return nil
		}
		commented := strings.ReplaceAll(string(formatted), "{\n", "{ // a comment\n")
		for name, v := range map[string]string{"gofmt": string(formatted), "comments": commented} {
			c1, _, err := canonicalGo(token.NewFileSet(), p, []byte(v))
			if err != nil {
				t.Errorf("%s (%s): %v", p, name, err)
			} else if string(c1) != string(c0) {
				t.Errorf("%s: %s changed its canonical form", p, name)
			}
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Fatalf("only %d Go files checked: the walk is broken", n)
	}
}

package pipeline

import (
	"io/fs"
	"maps"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"routebench"
)

// Helpers for code-salt tests, meant for reuse by key tests of specific
// stages:
//
//   - saltWith(t, fsys, edits, mods, roots...) is the code salt of the root
//     packages over a copy of fsys (routebench.Source, or a fstest.MapFS)
//     with edits applied (path -> new contents; a path fsys lacks is added),
//     with mods as the module file (nil: the committed moddeps.json) and no
//     linked modules (a test binary's build info lists none).
//   - saltLines is the same, returning the lines that went into the salt.
//   - stageRoots(t, fsys) lists the stage packages of a tree
//     (routebench/stages/*: what Stage.Code names).
//   - testMods(uses, versions) builds a module file.

func saltWith(t testing.TB, fsys fs.FS, edits map[string]string, mods *modDeps, roots ...string) string {
	t.Helper()
	s, _ := saltLines(t, fsys, edits, mods, roots...)
	return s
}

func saltLines(t testing.TB, fsys fs.FS, edits map[string]string, mods *modDeps, roots ...string) (string, []string) {
	t.Helper()
	if mods == nil {
		mods = committedMods(t)
	}
	tree := &sourceTree{}
	if err := tree.load(editedCopy(t, fsys, edits), mods, nil); err != nil {
		t.Fatal(err)
	}
	s, lines, err := tree.salt(roots)
	if err != nil {
		t.Fatal(err)
	}
	return s, lines
}

func committedMods(t testing.TB) *modDeps {
	t.Helper()
	m, err := embeddedModDeps()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// editedCopy copies fsys into a MapFS, so edits never touch the original.
func editedCopy(t testing.TB, fsys fs.FS, edits map[string]string) fstest.MapFS {
	t.Helper()
	c := fstest.MapFS{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		c[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for p, data := range edits {
		c[p] = &fstest.MapFile{Data: []byte(data)}
	}
	return c
}

func stageRoots(t testing.TB, fsys fs.FS) []string {
	t.Helper()
	dirs, err := fs.ReadDir(fsys, "stages")
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, d := range dirs {
		if d.IsDir() {
			roots = append(roots, modulePath+"/stages/"+d.Name())
		}
	}
	if len(roots) == 0 {
		t.Fatal("no stage packages under stages/")
	}
	return roots
}

// testMods is a module file in which package uses[p] reaches the listed
// modules, each at versions[m] (default v1.0.0), hash "h1:<m>@<version>".
func testMods(uses map[string][]string, versions map[string]string) *modDeps {
	m := &modDeps{Modules: map[string]modVersion{}, Packages: map[string][]string{}}
	for p, mods := range uses {
		m.Packages[p] = append([]string{}, mods...)
		sort.Strings(m.Packages[p])
		for _, mp := range mods {
			v := versions[mp]
			if v == "" {
				v = "v1.0.0"
			}
			m.Modules[mp] = modVersion{Version: v, Sum: "h1:" + mp + "@" + v}
		}
	}
	return m
}

// allSalts maps each root to its salt.
func allSalts(t testing.TB, fsys fs.FS, edits map[string]string, mods *modDeps, roots []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range roots {
		out[r] = saltWith(t, fsys, edits, mods, r)
	}
	return out
}

// A small tree: stage a imports model, which imports weights; stage c
// imports weights only; stage b imports nothing; pipeline is neutral.
var toySource = fstest.MapFS{
	"stages/a/a.go":      {Data: []byte("package a\nimport _ \"routebench/model\"\nimport _ \"routebench/pipeline\"\n")},
	"stages/a/a_test.go": {Data: []byte("package a\n")},
	"stages/b/b.go":      {Data: []byte("package b\n")},
	"stages/c/c.go":      {Data: []byte("package c\nimport _ \"routebench/model/weights\"\n")},
	"model/m.go":         {Data: []byte("package model\nimport _ \"routebench/model/weights\"\n")},
	"model/README.md":    {Data: []byte("docs\n")},
	"model/weights/w.go": {Data: []byte("package weights\n")},
	"pipeline/p.go":      {Data: []byte("package pipeline\n")},
}

// toyMods: model uses gomlx (and, in one build, go-xla); stage b uses
// gonum; pipeline uses a progress bar.
func toyMods(versions map[string]string) *modDeps {
	return testMods(map[string][]string{
		"routebench/stages/a":      nil,
		"routebench/stages/b":      {"example.com/gonum"},
		"routebench/stages/c":      nil,
		"routebench/model":         {"example.com/gomlx", "example.com/go-xla"},
		"routebench/model/weights": nil,
		"routebench/pipeline":      {"example.com/progressbar"},
	}, versions)
}

var toyRoots = []string{"routebench/stages/a", "routebench/stages/b", "routebench/stages/c"}

// (d) Editing a package's file re-keys the stages rooted at it or at its
// importers, transitively, and no others; the neutral runner re-keys none.
func TestSaltFollowsImports(t *testing.T) {
	s0 := allSalts(t, toySource, nil, toyMods(nil), toyRoots)
	for file, want := range map[string][]string{
		"stages/a/a.go":      {"routebench/stages/a"},
		"stages/b/b.go":      {"routebench/stages/b"},
		"model/m.go":         {"routebench/stages/a"},
		"model/weights/w.go": {"routebench/stages/a", "routebench/stages/c"},
		"pipeline/p.go":      nil,
	} {
		s1 := allSalts(t, toySource, map[string]string{file: "package x // edited\n"}, toyMods(nil), toyRoots)
		for _, r := range toyRoots {
			changed := s1[r] != s0[r]
			if changed != slices.Contains(want, r) {
				t.Errorf("editing %s: salt of %s changed=%v, want %v", file, r, changed, !changed)
			}
		}
	}
}

// (d) on the real source: stages that import a package are re-keyed by
// its edits, the others are not.
func TestEmbeddedSaltFollowsImports(t *testing.T) {
	roots := stageRoots(t, routebench.Source)
	s0 := allSalts(t, routebench.Source, nil, nil, roots)
	for file, c := range map[string]struct{ changes, keeps []string }{
		"model/train_loop.go":               {[]string{"train"}, []string{"tokenize", "evaluate", "report", "theory", "kernelspeed"}},
		"modelspec/weights/weights.go":      {[]string{"train", "evaluate", "report", "kernelspeed"}, []string{"tokenize", "theory"}},
		"modelspec/positions.go":            {[]string{"train", "evaluate", "report", "kernelspeed"}, []string{"tokenize", "theory"}},
		"stages/tokenize/run.go":            {[]string{"tokenize"}, []string{"train", "evaluate", "theory", "kernelspeed"}},
		"stages/tokenize/shards/batches.go": {[]string{"tokenize", "train", "evaluate"}, []string{"theory", "kernelspeed"}},
		"stages/theory/run.go":              {[]string{"theory"}, []string{"tokenize", "train", "evaluate", "kernelspeed", "report"}},
		"pipeline/runner.go":                {nil, []string{"tokenize", "train", "evaluate", "theory", "kernelspeed", "report"}},
		"artifacts/store.go":                {nil, []string{"tokenize", "train", "evaluate", "theory", "kernelspeed", "report"}},
	} {
		if _, err := fs.Stat(routebench.Source, file); err != nil {
			t.Fatalf("the test edits %s, which the source lacks: %v (pick another file of that package)", file, err)
		}
		s1 := allSalts(t, routebench.Source, map[string]string{file: "package x // edited\n"}, nil, roots)
		for _, st := range c.changes {
			if r := modulePath + "/stages/" + st; s1[r] == s0[r] {
				t.Errorf("editing %s did not change the salt of %s", file, r)
			}
		}
		for _, st := range c.keeps {
			if r := modulePath + "/stages/" + st; s1[r] != s0[r] {
				t.Errorf("editing %s changed the salt of %s", file, r)
			}
		}
	}
}

// (c) READMEs, tests and test data are not code: editing or adding them
// re-keys nothing, in the toy tree and in the real source.
func TestSaltIgnoresDocsAndTests(t *testing.T) {
	s0 := allSalts(t, toySource, nil, toyMods(nil), toyRoots)
	for _, file := range []string{"model/README.md", "stages/a/a_test.go", "stages/a/testdata/x.go"} {
		if s1 := allSalts(t, toySource, map[string]string{file: "package x // edited\n"}, toyMods(nil), toyRoots); !maps.Equal(s0, s1) {
			t.Errorf("editing %s changed a salt", file)
		}
	}
	roots := stageRoots(t, routebench.Source)
	r0 := allSalts(t, routebench.Source, nil, nil, roots)
	edits := map[string]string{}
	for _, file := range []string{"model/train_loop_test.go", "stages/evaluate/stage_test.go", "stages/theory/run_test.go"} {
		if _, err := fs.Stat(routebench.Source, file); err != nil {
			t.Fatalf("the test edits %s, which the source lacks: %v (pick another _test.go file)", file, err)
		}
		edits[file] = "package x // edited\n"
	}
	for _, file := range []string{"model/README.md", "stages/README.md", "stages/tokenize/testdata/new.go"} {
		edits[file] = "edited\n"
	}
	if r1 := allSalts(t, routebench.Source, edits, nil, roots); !maps.Equal(r0, r1) {
		t.Errorf("editing READMEs, tests and test data changed a stage's salt:\nbefore %v\nafter  %v", r0, r1)
	}
}

// (b) Bumping a module re-keys exactly the stages whose packages reach it;
// the neutral runner's modules re-key nothing.
func TestSaltFollowsModuleVersions(t *testing.T) {
	s0 := allSalts(t, toySource, nil, toyMods(nil), toyRoots)
	for mod, want := range map[string][]string{
		"example.com/gomlx":       {"routebench/stages/a"},
		"example.com/go-xla":      {"routebench/stages/a"},
		"example.com/gonum":       {"routebench/stages/b"},
		"example.com/progressbar": nil,
	} {
		s1 := allSalts(t, toySource, nil, toyMods(map[string]string{mod: "v1.0.1"}), toyRoots)
		for _, r := range toyRoots {
			if changed := s1[r] != s0[r]; changed != slices.Contains(want, r) {
				t.Errorf("bumping %s: salt of %s changed=%v, want %v", mod, r, changed, !changed)
			}
		}
	}
	// The real file: go-xla (model's XLA hook) re-keys what imports model
	// (training only: evaluate and report link no gomlx), on both builds,
	// and nothing else.
	roots := stageRoots(t, routebench.Source)
	r0 := allSalts(t, routebench.Source, nil, nil, roots)
	bumped := *committedMods(t)
	bumped.Modules = map[string]modVersion{}
	for p, v := range committedMods(t).Modules {
		if p == "github.com/gomlx/go-xla" {
			v.Version += "-bumped"
		}
		bumped.Modules[p] = v
	}
	r1 := allSalts(t, routebench.Source, nil, &bumped, roots)
	for _, st := range []string{"train"} {
		if r := modulePath + "/stages/" + st; r1[r] == r0[r] {
			t.Errorf("bumping go-xla did not change the salt of %s", r)
		}
	}
	for _, st := range []string{"tokenize", "evaluate", "report", "theory", "kernelspeed"} {
		if r := modulePath + "/stages/" + st; r1[r] != r0[r] {
			t.Errorf("bumping go-xla changed the salt of %s, which cannot reach it", r)
		}
	}
}

// (a) The modules the binary links only guard the file; they do not enter
// the salt. So the CPU build (no go-xla) and the XLA build get one salt for
// every stage, including training, whose model package uses go-xla in one
// of them.
func TestSaltIgnoresLinkedModules(t *testing.T) {
	cases := []struct {
		name string
		src  fs.FS
		mods *modDeps
	}{
		{"toy", toySource, toyMods(nil)},
		{"embedded", routebench.Source, committedMods(t)},
	}
	for _, c := range cases {
		var cpu, xla []debug.Module // xla = cpu + go-xla
		for p, v := range c.mods.Modules {
			d := debug.Module{Path: p, Version: v.Version, Sum: v.Sum}
			if !strings.HasSuffix(p, "/go-xla") {
				cpu = append(cpu, d)
			}
			xla = append(xla, d)
		}
		if len(xla) == len(cpu) {
			t.Fatalf("%s: the module file lists no go-xla", c.name)
		}
		var roots []string
		if c.name == "toy" {
			roots = toyRoots
		} else {
			roots = stageRoots(t, c.src)
		}
		for _, r := range roots {
			salts := map[string]bool{}
			for _, linked := range [][]debug.Module{cpu, xla} {
				tree := &sourceTree{}
				if err := tree.load(c.src, c.mods, linked); err != nil {
					t.Fatal(err)
				}
				s, _, err := tree.salt([]string{r})
				if err != nil {
					t.Fatal(err)
				}
				salts[s] = true
			}
			if len(salts) != 1 {
				t.Errorf("%s: %s has another salt when the binary also links go-xla", c.name, r)
			}
		}
	}
}

// The binary refuses to compute keys from a module file that disagrees
// with what it links, with an error naming the module and the fix.
func TestCheckLinked(t *testing.T) {
	mods := toyMods(nil)
	ok := []debug.Module{{Path: "example.com/gomlx", Version: "v1.0.0", Sum: "h1:example.com/gomlx@v1.0.0"}}
	if err := mods.checkLinked(ok); err != nil {
		t.Fatalf("matching module rejected: %v", err)
	}
	for name, c := range map[string]struct {
		linked debug.Module
		want   []string
	}{
		"version":  {debug.Module{Path: "example.com/gomlx", Version: "v1.1.0", Sum: "h1:example.com/gomlx@v1.0.0"}, []string{"example.com/gomlx", "v1.1.0", "v1.0.0", "make moddeps"}},
		"hash":     {debug.Module{Path: "example.com/gomlx", Version: "v1.0.0", Sum: "h1:other"}, []string{"example.com/gomlx", "h1:other", "make moddeps"}},
		"unlisted": {debug.Module{Path: "example.com/new", Version: "v0.1.0", Sum: "h1:x"}, []string{"example.com/new", "does not list it", "make moddeps"}},
		"replaced": {debug.Module{Path: "example.com/gomlx", Version: "v1.0.0", Sum: "h1:example.com/gomlx@v1.0.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.0", Sum: "h1:example.com/gomlx@v1.0.0"}}, []string{"example.com/fork@v1.0.0", "make moddeps"}},
	} {
		err := mods.checkLinked([]debug.Module{c.linked})
		if err == nil {
			t.Errorf("%s: a mismatched module was accepted", name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", name, err, w)
			}
		}
	}
	// A failed check leaves the tree unusable rather than unchecked.
	tree := &sourceTree{}
	if err := tree.load(toySource, mods, []debug.Module{{Path: "example.com/new", Version: "v0.1.0"}}); err == nil {
		t.Fatal("load accepted a module the file lacks")
	}
}

func TestSaltErrors(t *testing.T) {
	tree := &sourceTree{}
	if err := tree.load(toySource, toyMods(nil), nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tree.salt([]string{"routebench/nosuch"}); err == nil || !strings.Contains(err.Error(), "source.go") {
		t.Errorf("unknown package: got %v, want an error pointing at source.go", err)
	}
	src := editedCopy(t, toySource, map[string]string{"stages/d/d.go": "package d\n"})
	tree = &sourceTree{}
	if err := tree.load(src, toyMods(nil), nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tree.salt([]string{"routebench/stages/d"}); err == nil || !strings.Contains(err.Error(), "make moddeps") {
		t.Errorf("package missing from the module file: got %v, want an error saying make moddeps", err)
	}
	if _, err := parseModDeps([]byte("{")); err == nil || !strings.Contains(err.Error(), "make moddeps") {
		t.Errorf("corrupt module file: got %v, want an error saying make moddeps", err)
	}
}

// The real embedded source and module file: training's salt covers the
// model it imports and the modules the model uses on either build, and not
// the report, the runner or the runner's modules.
func TestEmbeddedSaltCoversImports(t *testing.T) {
	_, lines, err := CodeSalt([]string{"routebench/stages/train"})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"src routebench/stages/train/stage.go", "src routebench/model/train_loop.go", "src routebench/modelspec/weights/weights.go", "src routebench/modelspec/positions.go", "src routebench/stages/tokenize/",
		"dep github.com/gomlx/gomlx@v", "dep github.com/gomlx/go-xla@v"} {
		if !strings.Contains(all, want) {
			t.Errorf("train salt lacks %q", want)
		}
	}
	for _, not := range []string{"stages/report", "routebench/pipeline/", "routebench/artifacts/", "_test.go", "README", "progressbar"} {
		if strings.Contains(all, not) {
			t.Errorf("train salt includes %q", not)
		}
	}
	_, lines, err = CodeSalt([]string{"routebench/stages/theory"})
	if err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(lines, "\n"); strings.Contains(all, "gomlx") || !strings.Contains(all, "dep gonum.org/v1/gonum@v") {
		t.Errorf("theory's salt must name gonum and no gomlx module:\n%s", all)
	}
}

package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"

	"routebench"
)

// The code salt of a stage is the hash of the source of the packages that
// implement it and of every routebench package they import, transitively,
// plus the third-party modules linked into this binary (path, version and
// checksum, from runtime/debug.ReadBuildInfo), the Go version and the
// architecture. Linked modules rather than go.sum: adding a dependency that
// only another build uses (go-xla in the GPU binary) must not re-key the
// CPU binary's stages.
// The source comes from the binary itself (routebench.Source, go:embed), so
// the salt can never be stale: it is the code that runs. Consequences:
//   - editing a stage's package or anything it imports re-keys that stage
//     and, through its changed outputs, the stages downstream;
//   - editing README, tests (_test.go), another stage's package, or a
//     package the stage does not import changes nothing;
//   - the packages in neutralPackages are excluded: they move bytes and
//     compute keys but cannot change what a stage computes (their own
//     format changes are covered by artifacts.FormatVersion).
const modulePath = "routebench"

var neutralPackages = map[string]bool{
	"routebench/artifacts": true,
	"routebench/pipeline":  true,
}

// sourceTree indexes the embedded source by package.
type sourceTree struct {
	pkgs   map[string]*sourcePkg
	deps   []string // "module@version sum" of every linked third-party module
	loadMu sync.Once
	err    error
}

type sourcePkg struct {
	files   []sourceFile // sorted by name
	imports []string     // in-module imports, sorted
}

type sourceFile struct {
	name, sum string
}

var embedded = &sourceTree{}

func (t *sourceTree) load(src fs.FS, deps []string) error {
	t.loadMu.Do(func() {
		t.deps = deps
		t.err = t.index(src)
	})
	return t.err
}

func (t *sourceTree) index(src fs.FS) error {
	t.pkgs = map[string]*sourcePkg{}
	fset := token.NewFileSet()
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return fs.SkipDir
			}
			return nil
		}
		if !isCodeFile(p) {
			return nil
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		dir := path.Dir(p)
		imp := modulePath
		if dir != "." {
			imp += "/" + dir
		}
		pkg := t.pkgs[imp]
		if pkg == nil {
			pkg = &sourcePkg{}
			t.pkgs[imp] = pkg
		}
		fh := sha256.Sum256(data)
		pkg.files = append(pkg.files, sourceFile{path.Base(p), hex.EncodeToString(fh[:])})
		if strings.HasSuffix(p, ".go") {
			f, err := parser.ParseFile(fset, p, data, parser.ImportsOnly)
			if err != nil {
				return fmt.Errorf("code salt: parsing %s: %w", p, err)
			}
			for _, is := range f.Imports {
				ip, _ := strconv.Unquote(is.Path.Value)
				if ip == modulePath || strings.HasPrefix(ip, modulePath+"/") {
					pkg.imports = append(pkg.imports, ip)
				}
			}
		}
		return nil
	})
}

// isCodeFile: Go (not tests), assembly and C; docs and data never count.
func isCodeFile(p string) bool {
	if strings.HasSuffix(p, "_test.go") {
		return false
	}
	switch path.Ext(p) {
	case ".go", ".s", ".c", ".h":
		return true
	}
	return false
}

// salt returns the code salt of the given root packages and the lines that
// went into it (for --debug-key).
func (t *sourceTree) salt(roots []string) (string, []string, error) {
	seen := map[string]bool{}
	var visit func(p string) error
	visit = func(p string) error {
		if seen[p] || neutralPackages[p] {
			return nil
		}
		pkg, ok := t.pkgs[p]
		if !ok {
			return fmt.Errorf("code salt: package %s is not in the embedded source (add its top directory to source.go's go:embed line)", p)
		}
		seen[p] = true
		for _, ip := range pkg.imports {
			if err := visit(ip); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range roots {
		if err := visit(r); err != nil {
			return "", nil, err
		}
	}
	var names []string
	for p := range seen {
		names = append(names, p)
	}
	sort.Strings(names)
	lines := []string{"go " + runtime.Version() + " " + runtime.GOARCH}
	for _, d := range t.deps {
		lines = append(lines, "dep "+d)
	}
	for _, p := range names {
		files := append([]sourceFile(nil), t.pkgs[p].files...)
		sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
		for _, f := range files {
			lines = append(lines, "src "+p+"/"+f.name+" "+f.sum)
		}
	}
	h := sha256.New()
	for _, l := range lines {
		fmt.Fprintln(h, l)
	}
	return hex.EncodeToString(h.Sum(nil)), lines, nil
}

// CodeSalt is the salt of a stage's code packages, from the binary's own source.
func CodeSalt(roots []string) (string, []string, error) {
	if err := embedded.load(routebench.Source, linkedModules()); err != nil {
		return "", nil, err
	}
	return embedded.salt(roots)
}

// linkedModules lists the third-party modules linked into the running
// binary, sorted.
func linkedModules() []string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return []string{"(no build info)"}
	}
	var out []string
	for _, d := range bi.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		out = append(out, m.Path+"@"+m.Version+" "+m.Sum)
	}
	sort.Strings(out)
	return out
}

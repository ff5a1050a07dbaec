package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The module file's generator lives in a test so that it is not linked into
// the binary and cannot drift from the check: `make moddeps` runs
// TestModDepsFresh with -update-moddeps, which writes what the plain run
// compares.
var updateModDeps = flag.Bool("update-moddeps", false, "rewrite moddeps.json from go list (make moddeps)")

// listBuild is one configuration `go list -deps` is run under.
type listBuild struct{ goos, goarch, cgo, tags string }

func (b listBuild) String() string {
	tags := "-tags=" + b.tags
	if b.tags == "" {
		tags = "default tags"
	}
	return fmt.Sprintf("%s/%s CGO_ENABLED=%s %s", b.goos, b.goarch, b.cgo, tags)
}

// modDepsBuilds are the configurations the file is the union of: the CPU
// build (-tags noxla; cgo on or off, as the host's C compiler decides: make
// build does not set it) and the XLA build (default tags, cgo on, make
// gpu-binary), each for the platforms a binary may run on. One file for all
// of them keeps it independent of the machine that regenerates it, and the
// union is what gives both builds one salt (see salt.go).
var modDepsBuilds = func() []listBuild {
	var out []listBuild
	for _, p := range [][2]string{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "arm64"}} {
		out = append(out,
			listBuild{p[0], p[1], "0", "noxla"},
			listBuild{p[0], p[1], "1", "noxla"},
			listBuild{p[0], p[1], "1", ""})
	}
	return out
}()

// listPkg is what the generator reads of `go list -json`.
type listPkg struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Module     *listModule
}

type listModule struct {
	Path, Version, Sum string
	Main               bool
	Replace            *listModule
}

// generateModDeps computes the module file of the module rooted at root.
func generateModDeps(root string) ([]byte, error) {
	m := modDeps{
		GeneratedBy: "make moddeps (TestModDepsFresh in pipeline/moddeps_test.go, from go list -deps): for each routebench package, the third-party modules its imports reach; do not edit",
		Modules:     map[string]modVersion{},
		Packages:    map[string][]string{},
	}
	union := map[string]map[string]bool{}
	for _, b := range modDepsBuilds {
		m.Builds = append(m.Builds, b.String())
		pkgs, err := goList(root, b)
		if err != nil {
			return nil, err
		}
		for _, p := range pkgs {
			if p.Module == nil || !p.Module.Main {
				continue
			}
			if union[p.ImportPath] == nil {
				union[p.ImportPath] = map[string]bool{}
			}
			if err := reachModules(p, pkgs, union[p.ImportPath], m.Modules, b); err != nil {
				return nil, err
			}
		}
	}
	for p, set := range union {
		paths := []string{}
		for mp := range set {
			paths = append(paths, mp)
		}
		sort.Strings(paths)
		m.Packages[p] = paths
	}
	out, err := json.MarshalIndent(m, "", "\t")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// reachModules adds to set the modules of the third-party packages p's
// imports reach without passing through another in-module package (the salt
// follows those itself), and records their versions in table.
func reachModules(p *listPkg, pkgs map[string]*listPkg, set map[string]bool, table map[string]modVersion, b listBuild) error {
	seen := map[string]bool{}
	stack := append([]string(nil), p.Imports...)
	for len(stack) > 0 {
		ip := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[ip] || ip == "C" { // "C" is cgo's pseudo-package
			continue
		}
		seen[ip] = true
		q, ok := pkgs[ip]
		if !ok {
			return fmt.Errorf("go list (%s): %s imports %s, which the listing lacks", b, p.ImportPath, ip)
		}
		if q.Standard || q.Module == nil || q.Module.Main {
			continue
		}
		mod := q.Module
		v := modVersion{Version: mod.Version, Sum: mod.Sum}
		if r := mod.Replace; r != nil {
			v = modVersion{Version: r.Version, Sum: r.Sum}
			if r.Path != mod.Path {
				v.Replace = r.Path
			}
		}
		if v.Sum == "" {
			return fmt.Errorf("go list (%s): module %s has no go.sum hash: run go mod download %s", b, v.line(mod.Path), mod.Path)
		}
		if old, ok := table[mod.Path]; ok && old != v {
			return fmt.Errorf("go list (%s): module %s is both %s and %s", b, mod.Path, old.line(mod.Path), v.line(mod.Path))
		}
		table[mod.Path] = v
		set[mod.Path] = true
		stack = append(stack, q.Imports...)
	}
	return nil
}

// goList runs `go list -deps` over every package of the module under one
// build configuration. It never downloads (GOPROXY=off): a missing module
// is an error saying how to fetch it.
func goList(root string, b listBuild) (map[string]*listPkg, error) {
	args := []string{"list", "-deps", "-json=ImportPath,Standard,Imports,Module"}
	if b.tags != "" {
		args = append(args, "-tags="+b.tags)
	}
	cmd := exec.Command("go", append(args, "./...")...)
	cmd.Dir = root
	// GOFLAGS is replaced, not inherited: make exports -tags=noxla, which
	// would turn every configuration into the CPU build.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off", "GOPROXY=off",
		"GOOS="+b.goos, "GOARCH="+b.goarch, "CGO_ENABLED="+b.cgo)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps (%s) in %s: %w: %s (are the modules downloaded? make modules)", b, root, err, strings.TrimSpace(stderr.String()))
	}
	pkgs := map[string]*listPkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listPkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list -deps (%s): decoding its output: %w", b, err)
		}
		pkgs[p.ImportPath] = &p
	}
	return pkgs, nil
}

// touchModuleFiles opens go.mod, go.sum and every Go file of the module.
// go test caches a passing result keyed on the files the test opens, and
// it cannot see what the go list child reads: without this, a go.mod bump
// or a new import would be answered by a cached "ok".
func touchModuleFiles(t *testing.T, root string) {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".go") || p == filepath.Join(root, "go.mod") || p == filepath.Join(root, "go.sum")) {
			_, err = os.ReadFile(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestModDepsFresh regenerates the module file and compares it with the
// committed one (with -update-moddeps, it writes it instead).
func TestModDepsFresh(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is unavailable; it is needed to list the module's dependencies")
	}
	root := ".."
	touchModuleFiles(t, root)
	got, err := generateModDeps(root)
	if err != nil {
		t.Fatal(err)
	}
	if *updateModDeps {
		if err := os.WriteFile("moddeps.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, modDepsJSON) {
		t.Logf("committed -> now:\n%s", modDiff(modDepsJSON, got))
		t.Fatalf("%s is stale (the module's dependencies changed): run make moddeps", modDepsFile)
	}
}

// modDiff lists what differs between two module files, by module and by
// package, so the log says which dependency moved; a file that cannot be
// parsed differs entirely.
func modDiff(committed, now []byte) string {
	var a, b modDeps
	if json.Unmarshal(committed, &a) != nil || json.Unmarshal(now, &b) != nil {
		return "  (the committed file cannot be parsed)"
	}
	var out []string
	for _, p := range sortedKeys(a.Modules, b.Modules) {
		if va, vb := a.Modules[p], b.Modules[p]; va != vb {
			out = append(out, fmt.Sprintf("  module %s: %q -> %q", p, va.line(p), vb.line(p)))
		}
	}
	for _, p := range sortedKeys(a.Packages, b.Packages) {
		if pa, pb := a.Packages[p], b.Packages[p]; !slices.Equal(pa, pb) {
			out = append(out, fmt.Sprintf("  package %s: %v -> %v", p, pa, pb))
		}
	}
	if !slices.Equal(a.Builds, b.Builds) || a.GeneratedBy != b.GeneratedBy {
		out = append(out, "  the header (generated_by, builds) differs")
	}
	return strings.Join(out, "\n")
}

func sortedKeys[V any](a, b map[string]V) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	return slices.Sorted(maps.Keys(set))
}

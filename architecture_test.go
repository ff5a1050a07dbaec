package routebench

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// docs/architecture.md's table of rooms is the one statement of what each
// package owns and may import; this test holds the code to it.
func TestArchitectureTable(t *testing.T) {
	for _, e := range checkRooms(readRooms(t, "docs/architecture.md"), modulePackages(t, ".")) {
		t.Error(e)
	}
}

// The mutations: a package missing from the table, a row naming no
// package and an import the table forbids are each found.
func TestArchitectureTableCanFail(t *testing.T) {
	rooms := parseRooms("| room | what | may import |\n|---|---|---|\n| `a` | owns | `b` |\n| `b` | owns | none |\n")
	if len(rooms) != 2 || !slices.Equal(rooms["a"], []string{"b"}) || rooms["b"] != nil {
		t.Fatalf("parseRooms: %v", rooms)
	}
	if errs := checkRooms(rooms, map[string][]string{"a": {"b"}, "b": nil}); len(errs) != 0 {
		t.Fatalf("a conforming tree: %v", errs)
	}
	for name, pkgs := range map[string]map[string][]string{
		"a package missing from the table": {"a": {"b"}, "b": nil, "c": nil},
		"a row naming no package":          {"a": {"b"}},
		"a forbidden import":               {"a": {"b"}, "b": {"a"}},
	} {
		if errs := checkRooms(rooms, pkgs); len(errs) != 1 {
			t.Errorf("%s: %d errors %v, want 1", name, len(errs), errs)
		}
	}
}

// checkRooms lists every way pkgs (package -> in-module imports) breaks
// the table rooms (room -> allowed imports).
func checkRooms(rooms, pkgs map[string][]string) []string {
	var errs []string
	for p, imports := range pkgs {
		allowed, ok := rooms[p]
		if !ok {
			errs = append(errs, "package "+p+" is not in docs/architecture.md's table of rooms: add its row (what it owns, what it may import)")
			continue
		}
		for _, ip := range imports {
			if !slices.Contains(allowed, ip) {
				errs = append(errs, "package "+p+" imports "+ip+", which its row in docs/architecture.md does not allow: change the code, or the rule with a reason")
			}
		}
	}
	for r := range rooms {
		if _, ok := pkgs[r]; !ok {
			errs = append(errs, "docs/architecture.md's room "+r+" is no package of the module: remove or rename its row")
		}
	}
	sort.Strings(errs)
	return errs
}

var roomRow = regexp.MustCompile("^\\| `([^`]+)` \\|[^|]*\\| ([^|]*) \\|$")

func parseRooms(doc string) map[string][]string {
	rooms := map[string][]string{}
	for _, line := range strings.Split(doc, "\n") {
		m := roomRow.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		var allowed []string
		for _, f := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[2], -1) {
			allowed = append(allowed, f[1])
		}
		rooms[m[1]] = allowed
	}
	return rooms
}

func readRooms(t *testing.T, file string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rooms := parseRooms(string(b))
	if len(rooms) < 10 {
		t.Fatalf("%s: only %d rooms parsed: is the table's format still | `room` | owns | may import |?", file, len(rooms))
	}
	return rooms
}

// modulePackages maps each package directory of the module (relative,
// "routebench" for the root) to the in-module packages its non-test Go
// files import, over every build tag.
func modulePackages(t *testing.T, root string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if ignored(f) {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		if dir == "." {
			dir = "routebench"
		}
		imports := pkgs[dir]
		for _, is := range f.Imports {
			ip, _ := strconv.Unquote(is.Path.Value)
			var rel string
			switch {
			case ip == "routebench":
				rel = "routebench"
			case strings.HasPrefix(ip, "routebench/"):
				rel = strings.TrimPrefix(ip, "routebench/")
			default:
				continue
			}
			if !slices.Contains(imports, rel) {
				imports = append(imports, rel)
			}
		}
		sort.Strings(imports)
		pkgs[dir] = imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// ignored: a file behind //go:build ignore (a go run generator) belongs to
// no package.
func ignored(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if c.Text == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

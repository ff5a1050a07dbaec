package pipeline

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/printer"
	"go/scanner"
	"go/token"
	"path"
	"strings"
)

// The code salt hashes what can change a result, not how it is written:
// each Go file is parsed and printed again without its comments, and each
// assembly or C file is hashed with its comments and blank space stripped.
// So a comment, a gofmt reformat or a blank line moves no stage key, while a
// changed identifier, constant, operator or directive does (canon_test.go
// holds both kinds of edit). Kept from the comments, because they change
// what is compiled: every //go: directive (build constraints, noescape,
// embed, linkname, ...), //line directives, and a cgo preamble (the
// comment above import "C").
//
// A Go file that no build of the project compiles (its //go:build line
// cannot be satisfied with the "ignore" tag unset: a `go run` generator)
// does not count at all, nor do its imports. Files of other tags, GOOS or
// GOARCH (purego, the XLA build, another CPU's kernels) still count, so
// every build of one commit computes the same keys.

// canonicalGo returns the tokens of a Go file's comment-free print (nil when no
// build compiles it) and the in-module packages it imports.
func canonicalGo(fset *token.FileSet, name string, src []byte) (canon []byte, imports []string, err error) {
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, fmt.Errorf("code salt: parsing %s: %w", name, err)
	}
	built, err := anyBuildCompiles(f)
	if err != nil {
		return nil, nil, fmt.Errorf("code salt: %s: %w", name, err)
	}
	if !built {
		return nil, nil, nil
	}
	for _, is := range f.Imports {
		ip := strings.Trim(is.Path.Value, "\"`")
		if ip == modulePath || strings.HasPrefix(ip, modulePath+"/") {
			imports = append(imports, ip)
		}
	}
	f.Comments = keptComments(f)
	// gofmt sorts imports; doing the same here makes the order of an import
	// block (which cannot change a result) irrelevant too.
	ast.SortImports(fset, f)
	var buf bytes.Buffer
	cfg := printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}
	if err := cfg.Fprint(&buf, fset, f); err != nil {
		return nil, nil, fmt.Errorf("code salt: printing %s: %w", name, err)
	}
	canon, err = tokenLines(name, buf.Bytes())
	return canon, imports, err
}

// keptComments keeps, of a file's comments, only the directives and the
// cgo preamble.
func keptComments(f *ast.File) []*ast.CommentGroup {
	preamble := map[*ast.CommentGroup]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		for _, s := range g.Specs {
			is := s.(*ast.ImportSpec)
			if is.Path.Value != `"C"` {
				continue
			}
			if is.Doc != nil {
				preamble[is.Doc] = true
			} else if g.Doc != nil {
				preamble[g.Doc] = true
			}
		}
	}
	// Never nil: a file printed with no comment list prints its nodes' doc
	// comments instead (go/printer's useNodeComments).
	kept := []*ast.CommentGroup{}
	for _, g := range f.Comments {
		if preamble[g] {
			kept = append(kept, g)
			continue
		}
		var dirs []*ast.Comment
		for _, c := range g.List {
			if isDirective(c.Text) {
				dirs = append(dirs, c)
			}
		}
		if len(dirs) > 0 {
			kept = append(kept, &ast.CommentGroup{List: dirs})
		}
	}
	return kept
}

// isDirective: a //go: or //line comment (no space after the slashes) or
// an old-style "// +build" line: the forms the toolchain reads.
func isDirective(text string) bool {
	return strings.HasPrefix(text, "//go:") || strings.HasPrefix(text, "//line ") || strings.HasPrefix(text, "// +build")
}

// anyBuildCompiles reports whether some build compiles the file: whether
// its build constraint can be satisfied with the tag "ignore" false and
// every other tag free (the constraint's own tags are enumerated; a file
// without a constraint is always built).
func anyBuildCompiles(f *ast.File) (bool, error) {
	var expr constraint.Expr
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if constraint.IsGoBuild(c.Text) {
				e, err := constraint.Parse(c.Text)
				if err != nil {
					return false, fmt.Errorf("its build constraint %q cannot be parsed: %w", c.Text, err)
				}
				expr = e
			}
		}
	}
	if expr == nil {
		return true, nil
	}
	var tags []string
	seen := map[string]bool{}
	expr.Eval(func(tag string) bool {
		if tag != "ignore" && !seen[tag] {
			seen[tag] = true
			tags = append(tags, tag)
		}
		return false
	})
	if len(tags) > 16 {
		return true, nil // too many to enumerate: count the file (a spurious re-key at worst)
	}
	for set := 0; set < 1<<len(tags); set++ {
		on := map[string]bool{}
		for i, t := range tags {
			on[t] = set&(1<<i) != 0
		}
		if expr.Eval(func(tag string) bool { return on[tag] }) {
			return true, nil
		}
	}
	return false, nil
}

// canonicalAsm strips an assembly or C file's comments (// to the end of
// the line, /* ... */), collapses runs of blanks and drops blank lines. A
// comment marker inside a quoted string is left alone.
func canonicalAsm(src []byte) []byte {
	var out bytes.Buffer
	inBlock := false
	for _, line := range strings.Split(string(src), "\n") {
		var b strings.Builder
		quote := byte(0)
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case inBlock:
				if c == '*' && i+1 < len(line) && line[i+1] == '/' {
					inBlock = false
					i++
					b.WriteByte(' ')
				}
				continue
			case quote != 0:
				if c == '\\' && i+1 < len(line) {
					b.WriteByte(c)
					i++
					c = line[i]
				} else if c == quote {
					quote = 0
				}
			case c == '"' || c == '\'':
				quote = c
			case c == '/' && i+1 < len(line) && line[i+1] == '/':
				i = len(line)
				continue
			case c == '/' && i+1 < len(line) && line[i+1] == '*':
				inBlock = true
				i++
				continue
			}
			b.WriteByte(c)
		}
		if l := strings.Join(strings.Fields(b.String()), " "); l != "" {
			out.WriteString(l)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// canonicalSource is what the salt hashes of one code file (nil: the file
// is in no build), and the in-module imports of a Go file.
func canonicalSource(fset *token.FileSet, name string, src []byte) ([]byte, []string, error) {
	if path.Ext(name) == ".go" {
		return canonicalGo(fset, name, src)
	}
	return canonicalAsm(src), nil, nil
}

// tokenLines writes the tokens of a printed Go file one a line (a
// comment kept by keptComments is one token), so that neither spacing nor
// alignment nor a blank line left where a comment was can reach the salt.
// Semicolons are written without their literal: an explicit one and one
// the scanner inserts at a line's end are the same token.
func tokenLines(name string, src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	file := fset.AddFile(name, -1, len(src))
	var errs scanner.ErrorList
	var s scanner.Scanner
	s.Init(file, src, func(pos token.Position, msg string) { errs.Add(pos, msg) }, scanner.ScanComments)
	var out bytes.Buffer
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		switch {
		case tok == token.SEMICOLON:
			out.WriteString(";\n")
		case lit != "":
			fmt.Fprintf(&out, "%s %q\n", tok, lit)
		default:
			out.WriteString(tok.String() + "\n")
		}
	}
	if errs.Len() > 0 {
		return nil, fmt.Errorf("code salt: scanning %s as printed: %w", name, errs.Err())
	}
	return out.Bytes(), nil
}

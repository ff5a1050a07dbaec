package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"routebench/artifacts"
	"routebench/internal/corpustest"
)

// export refuses what it cannot export with a one-line error that says
// what to do, and never trains: an uncached stage is an error.
func TestExportErrors(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	if _, err := artifacts.Open(store); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nosuch")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no stages", []string{"export", "--store", store}, "export takes train stage names"},
		{"negative windows", []string{"export", "train/rope", "--windows", "-1", "--store", store}, "--windows -1 and --window-len 0 must not be negative"},
	}
	if err := corpusPresent(); err != nil {
		t.Run("default corpus cases", func(t *testing.T) { corpustest.Missing(t, err) })
	} else {
		cases = append(cases, []struct {
			name string
			args []string
			want string
		}{
			{"not a train stage", []string{"export", "tokenize", "--profile", "smoke", "--store", store}, "tokenize is a tokenize stage; only train stages hold weights"},
			{"not cached", []string{"export", "train/rope", "--profile", "smoke", "--store", store}, "stage train/rope of profile smoke is not cached"},
			{"unknown stage", []string{"export", "train/nosuch", "--profile", "smoke", "--store", store}, `unknown stage "train/nosuch"`},
			{"missing store", []string{"export", "train/rope", "--profile", "smoke", "--store", missing}, "no artifact store at " + missing},
		}...)
	}
	defer func() {
		if _, err := os.Stat(missing); !os.IsNotExist(err) {
			t.Errorf("export created a store at the missing --store path %s", missing)
		}
	}()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := run(context.Background(), c.args)
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q: want one line containing %q", msg, c.want)
			}
		})
	}
}

// export --help documents export's own flags, and exits cleanly.
func TestExportHelp(t *testing.T) {
	var o exportOptions
	c, err := parseExportFlags([]string{"--help"}, &o)
	if err == nil || c == nil {
		t.Fatalf("--help: %v", err)
	}
	var b strings.Builder
	c.fs.SetOutput(&b)
	c.fs.PrintDefaults()
	for _, f := range []string{"-windows", "-window-len", "-seed", "-force", "-store", "-out", "-profile"} {
		if !strings.Contains(b.String(), f) {
			t.Errorf("export --help does not list %s:\n%s", f, b.String())
		}
	}
	if err := run(context.Background(), []string{"export", "--help"}); err != nil {
		t.Errorf("export --help returned %v", err)
	}
}

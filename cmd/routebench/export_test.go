package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"routebench/internal/corpustest"
)

// export refuses what it cannot export with a one-line error that says
// what to do, and never trains: an uncached stage is an error.
func TestExportErrors(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
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
		}...)
	}
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

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"routebench/stages/report"
)

const tablesUsage = `usage: routebench tables [--out DIR] [RESULTS]

writes every tidy table under RESULTS (default: the checkout's results/; the
report's tidy.parquet and train_curves.parquet, and each study's in
results/study-<name>/) as CSV: beside each table, or under --out at the same
relative path. The CSV is written on demand and never committed; a null is
an empty cell. docs/interop.md has the columns.

flags:
`

// cmdTables writes the tidy tables' CSV (report.TablesToCSV).
func cmdTables(args []string) error {
	fs := flag.NewFlagSet("tables", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "", "write the CSV under this folder (default: beside each table)")
	// The flag may come before or after the folder.
	var dirs []string
	for rest := args; ; {
		err := fs.Parse(rest)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Print(tablesUsage)
			fs.SetOutput(os.Stdout)
			fs.PrintDefaults()
			return nil
		}
		if err != nil {
			return fmt.Errorf("tables: %v (routebench tables --help): %w", err, errUsage)
		}
		if rest = fs.Args(); len(rest) == 0 {
			break
		}
		dirs, rest = append(dirs, rest[0]), rest[1:]
	}
	src := filepath.Join(repoRoot(), "results")
	switch len(dirs) {
	case 0:
	case 1:
		src = dirs[0]
	default:
		return fmt.Errorf("tables takes one results folder, got %v (routebench tables --help): %w", dirs, errUsage)
	}
	dst := *out
	if dst == "" {
		dst = src
	}
	wrote, err := report.TablesToCSV(src, dst)
	for _, f := range wrote {
		fmt.Fprintf(os.Stderr, "tables: %s\n", f)
	}
	return err
}

// removeStaleTables removes the CSV twins beside every tidy table an
// export just wrote (report.RemoveStaleCSV) and names each it removed.
func removeStaleTables(wrote []string) error {
	for _, f := range wrote {
		if filepath.Base(f) != filepath.Base(report.TidyParquetFile) {
			continue
		}
		removed, err := report.RemoveStaleCSV(filepath.Dir(f))
		for _, r := range removed {
			fmt.Fprintf(os.Stderr, "removed %s (older than the tables beside it; `routebench tables` writes it anew)\n", r)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

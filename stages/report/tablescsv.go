package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tableFiles are the Parquet tables WriteTidyTables writes, by file name.
var tableFiles = []string{tidyBase + ".parquet", curvesBase + ".parquet"}

// TablesToCSV writes every tidy table under src (tidy.parquet,
// train_curves.parquet: the report's results/ and each study's folder in
// it) as CSV under out, at the same relative path with .csv for .parquet
// (`routebench tables`): the long CSV is written on demand, never
// committed. A null is an empty cell; floats are Go's shortest round-trip
// form. It returns the files it wrote.
func TablesToCSV(src, out string) ([]string, error) {
	var wrote []string
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !isTableFile(d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(out, strings.TrimSuffix(rel, ".parquet")+".csv")
		t, err := readParquetTable(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if err := writeCSVTable(dst, t); err != nil {
			return err
		}
		wrote = append(wrote, dst)
		return nil
	})
	if err != nil {
		return wrote, fmt.Errorf("tables: converting %s to CSV: %w", src, err)
	}
	if len(wrote) == 0 {
		return nil, fmt.Errorf("tables: no %s under %s: name a results folder the report or a study exported (make reproduce, routebench results, routebench sweep)", strings.Join(tableFiles, " or "), src)
	}
	return wrote, nil
}

func isTableFile(name string) bool {
	for _, f := range tableFiles {
		if name == f {
			return true
		}
	}
	return false
}

// RemoveStaleCSV removes, from an exported tables folder (results/, a
// study's folder), the CSV twins of its Parquet tables: until this format
// the report wrote tidy.csv and train_curves.csv there, and an export must
// not leave them beside tables they no longer describe (nor would a CSV
// that `routebench tables` wrote there before the rerun). It returns the
// files it removed.
func RemoveStaleCSV(dir string) ([]string, error) {
	var removed []string
	for _, f := range tableFiles {
		path := filepath.Join(dir, strings.TrimSuffix(f, ".parquet")+".csv")
		err := os.Remove(path)
		switch {
		case err == nil:
			removed = append(removed, path)
		case !errors.Is(err, fs.ErrNotExist):
			return removed, fmt.Errorf("removing the stale %s (written before the tables it sits beside): %w", path, err)
		}
	}
	return removed, nil
}

package export

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"routebench/artifacts"
)

// exportFiles are the only names an export directory holds; a directory
// with any other entry is not an export and is never replaced.
var exportFiles = map[string]bool{ModelFile: true, ConfigFile: true, ReferenceFile: true}

// checkTarget says whether dir holds an export to replace, and whether
// that export holds other weights than digest (allowed only with force).
func checkTarget(dir, digest string, force bool) (exists, other bool, err error) {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("reading the directory already there: %w (export elsewhere with --out)", err)
	}
	var foreign []string
	for _, e := range ents {
		if !exportFiles[e.Name()] || !e.Type().IsRegular() {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		return false, false, fmt.Errorf("the directory is there and holds %s, which no export writes: export elsewhere with --out, or move it away", strings.Join(foreign, ", "))
	}
	if len(ents) == 0 {
		return true, false, nil
	}
	old := "an export whose config.json does not parse"
	var c struct {
		Variant string `json:"variant"`
		Digest  string `json:"weights_sha256"`
		Source  Source `json:"source"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, ConfigFile)); err == nil && json.Unmarshal(b, &c) == nil {
		if c.Digest == digest {
			return true, false, nil
		}
		old = fmt.Sprintf("an export of other weights (%s from %s, weights_sha256 %.12s; this one's %.12s)", c.Variant, c.Source.Stage, c.Digest, digest)
		if c.Digest == "" {
			old = fmt.Sprintf("an export without a weights digest (%s from %s; an older format)", c.Variant, c.Source.Stage)
		}
	}
	if !force {
		return false, false, fmt.Errorf("the directory holds %s: pass --force to replace it, or export elsewhere with --out", old)
	}
	return true, true, nil
}

// publishBroken makes publish fail after writing the named file into the
// temporary directory, for the test that a failed export leaves dir as it
// was.
var publishBroken string

// publish writes files into a temporary directory beside dir and renames
// it to dir. An old dir is first renamed aside and removed once the new
// one is in place, so dir is at every moment the old export, the new one or, for
// the instant between the two renames, absent; never a mix.
func publish(dir string, files map[string][]byte, replace bool) error {
	parent, base := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := artifacts.WriteFileAtomic(filepath.Join(tmp, name), files[name], 0o644); err != nil {
			return err
		}
		if publishBroken == name {
			return fmt.Errorf("publish broken after %s (test)", name)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if replace {
		// tmp's name is this process's own (MkdirTemp), so the name
		// beside it is free; os.Rename will not rename onto a directory.
		aside := tmp + ".old"
		if err := os.Rename(dir, aside); err != nil {
			return fmt.Errorf("moving the old export aside: %w", err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			if rerr := os.Rename(aside, dir); rerr != nil {
				return fmt.Errorf("renaming the new export into place: %w; the old one is left at %s (%v)", err, aside, rerr)
			}
			return fmt.Errorf("renaming the new export into place: %w", err)
		}
		done = true
		os.RemoveAll(aside)
	} else {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("renaming the new export into place: %w", err)
		}
		done = true
	}
	return artifacts.SyncDir(parent)
}

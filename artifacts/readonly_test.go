package artifacts

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// treeState lists every path under root with its mode, size and mtime: a
// write anywhere in the tree (a created dir, a probe file made and removed,
// a lock file) changes it.
func treeState(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d\n", p, info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// OpenExisting reads a store without writing one byte of it, and refuses
// a path that holds no store instead of making one there.
func TestOpenExisting(t *testing.T) {
	root := t.TempDir()
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	a := actionFor("ro")
	putFiles(t, s, a, map[string][]byte{"w.bin": []byte("weights")})
	if os.Getuid() != 0 {
		// Without root, take write permission away for real (root ignores it;
		// the tree comparison below covers that case).
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o555)
			}
			return nil
		})
		t.Cleanup(func() {
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					os.Chmod(p, 0o755)
				}
				return nil
			})
		})
	}
	before := treeState(t, root)
	ro, err := OpenExisting(root)
	if err != nil {
		t.Fatal(err)
	}
	art, err := ro.Get(a)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := art.ReadFile("w.bin"); err != nil || !bytes.Equal(data, []byte("weights")) {
		t.Fatalf("read back %q, %v", data, err)
	}
	if after := treeState(t, root); after != before {
		t.Errorf("OpenExisting and Get changed the store:\nbefore\n%s\nafter\n%s", before, after)
	}
	// Control: Open on the same tree writes (its probe file), so the
	// comparison above can see a write.
	if os.Getuid() == 0 {
		if _, err := Open(root); err != nil {
			t.Fatal(err)
		}
		if treeState(t, root) == before {
			t.Error("control: Open left the tree as it was, so the comparison cannot see a write")
		}
	}

	missing := filepath.Join(t.TempDir(), "nosuch")
	_, err = OpenExisting(missing)
	if err == nil || !strings.Contains(err.Error(), "no artifact store at "+missing) || !strings.Contains(err.Error(), "--store") {
		t.Fatalf("missing store: %v", err)
	}
	if _, serr := os.Stat(missing); !os.IsNotExist(serr) {
		t.Errorf("OpenExisting created %s", missing)
	}
}

// WriteFileAtomic replaces a file whole and leaves no temp file behind.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	for _, data := range []string{"first", "second, longer"} {
		if err := WriteFileAtomic(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != data {
			t.Fatalf("read %q, want %q", got, data)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries left in the directory, want 1", len(ents))
	}
	if err := WriteFileAtomic(filepath.Join(dir, "nosuch", "f"), nil, 0o644); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
}

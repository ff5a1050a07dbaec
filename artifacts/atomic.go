package artifacts

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeAtomic copies r into a temp file in dir, fsyncs it, renames it to
// dst and fsyncs dir. A crash at any point leaves either nothing at dst or
// the complete file; the temp file is never mistaken for a blob because the
// readers only look at final names and verify content anyway.
func writeAtomic(dir, dst string, r io.Reader, perm os.FileMode) (int64, error) {
	// Named after dst, so that a writer that knows its file can remove what
	// a killed write left (model.Train does: "."+name+".tmp-*").
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return 0, err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	n, err := io.Copy(tmp, r)
	if err != nil {
		return n, err
	}
	if err := tmp.Chmod(perm); err != nil {
		return n, err
	}
	if err := tmp.Sync(); err != nil {
		return n, err
	}
	if err := tmp.Close(); err != nil {
		return n, err
	}
	if err := os.Rename(name, dst); err != nil {
		return n, err
	}
	ok = true
	return n, syncDir(filepath.Dir(dst))
}

// WriteFileAtomic writes data to path as writeAtomic does (a temp file
// beside it, fsynced, renamed over path, the directory fsynced): readers
// see the old file or the whole new one, never a part. It is the store's
// own write, exported so that code outside the store (an export
// directory, a report file) need not write that sequence again.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	_, err := writeAtomic(filepath.Dir(path), path, bytes.NewReader(data), perm)
	return err
}

// CopyFileAtomic writes what r holds to path as WriteFileAtomic does,
// streaming (a file too large to hold in memory), and returns its size.
func CopyFileAtomic(path string, r io.Reader, perm os.FileMode) (int64, error) {
	return writeAtomic(filepath.Dir(path), path, r, perm)
}

// SyncDir fsyncs a directory, so that the renames and creations inside it
// survive a crash (after renaming a directory into place, sync its parent).
func SyncDir(dir string) error { return syncDir(dir) }

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

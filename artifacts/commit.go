package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// PutOnce is Put for a stage whose key may be computed by two attempts at
// once (a requeued Slurm job and its straggler, two nodes where flock does
// not reach): the first complete commit wins. The index entry is linked
// into place (link(2) fails if the name exists, on local file systems and
// NFS alike) instead of renamed over, so a later attempt never replaces an
// entry a reader may already be using; it verifies the committed entry and
// returns it with existed set. A damaged entry is replaced, as Put would.
// Stages are deterministic, so the entry kept and the one dropped differ
// only in their volatile files.
func (s *Store) PutOnce(a ActionID, stage string, dir string) (art *Artifact, existed bool, err error) {
	return s.put(a, stage, dir, true)
}

// commitIndex writes entry as action a's index entry. With once set, an
// existing entry that verifies is kept and returned.
func (s *Store) commitIndex(a ActionID, stage, entry string, once bool) (*Artifact, error) {
	idx := s.indexPath(a)
	dir := filepath.Dir(idx)
	if err := s.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("storing output of stage %s: %w", stage, err)
	}
	if !once {
		if _, err := writeAtomic(dir, idx, strings.NewReader(entry), 0o644); err != nil {
			return nil, fmt.Errorf("storing index entry of stage %s: %w", stage, err)
		}
		return nil, nil
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("storing index entry of stage %s: %w", stage, err)
	}
	name := tmp.Name()
	defer os.Remove(name) // the temp name only: the entry is a second link, or renamed away
	_, err = tmp.WriteString(entry)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("storing index entry of stage %s: %w", stage, err)
	}
	lerr := os.Link(name, idx)
	if lerr == nil {
		return nil, syncDir(dir)
	}
	if errors.Is(lerr, fs.ErrExist) {
		if got, gerr := s.Get(a); gerr == nil {
			return got, nil
		}
		// Damaged: repair it by rename, as Put does.
	} else if got, gerr := s.Get(a); gerr == nil {
		// No hard links on this file system: a verified entry still wins.
		return got, nil
	}
	if err := os.Rename(name, idx); err != nil {
		return nil, fmt.Errorf("storing index entry of stage %s: %w", stage, err)
	}
	return nil, syncDir(dir)
}

// Revalidate makes this host look at the store's directories again for
// action a before a Get: it lists the directory of a's index entry and of
// the blobs the entry names. An NFS client caches a failed lookup (a
// "negative dentry") for up to acdirmax seconds; reading the directory
// revalidates it, so an entry another node committed is seen on the next
// Get instead of after the cache expires. Errors are ignored: the Get that
// follows reports what is wrong.
func (s *Store) Revalidate(a ActionID) {
	idx := s.indexPath(a)
	readDirNames(filepath.Dir(idx))
	data, err := os.ReadFile(idx)
	if err != nil {
		return
	}
	art, err := decodeIndex(data)
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, f := range art.Files {
		d := filepath.Dir(s.blobPath(f.ID))
		if !seen[d] {
			seen[d] = true
			readDirNames(d)
		}
	}
}

func readDirNames(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Readdirnames(-1)
		d.Close()
	}
}

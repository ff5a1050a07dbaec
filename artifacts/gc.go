package artifacts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ActionLock serializes processes that would compute the same action: the
// second one waits, then finds a hit. Release it with the returned func.
func (s *Store) ActionLock(a ActionID) (func(), error) {
	if s.readOnly {
		return nil, s.readOnlyError("locking action " + a.Short())
	}
	l, err := s.lockOrWarn(filepath.Join(s.root, "locks", a.String()), true)
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w", s.root, err)
	}
	return l.Unlock, nil
}

// Entries lists every action that has an index entry (valid or not).
func (s *Store) Entries() ([]ActionID, error) {
	var ids []ActionID
	err := filepath.WalkDir(filepath.Join(s.root, "index"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if id, err := ParseActionID(d.Name()); err == nil {
			ids = append(ids, id)
		}
		return nil
	})
	return ids, err
}

// GCStats reports what a collection removed, and how many entries it kept.
type GCStats struct {
	Entries, Blobs, WorkDirs int
	Bytes                    int64
	Kept                     int
}

// GC removes index entries for which keep is false (and entries that do not
// decode), then every blob no remaining entry references, then temp files
// and abandoned work directories: a key's work dir is kept only while the
// key is kept and not committed (its attempts' checkpoints may resume it);
// once the key is committed, what attempts left in it (a killed or
// crashed attempt's dir, a straggler's, on any host) is never read again. Entries go before blobs, under an
// exclusive lock that every Put shares, so no entry is ever left pointing
// at a removed blob. Without flock support GC refuses: it could delete a
// blob that another machine's Put has written but not yet indexed.
func (s *Store) GC(keep func(ActionID) bool) (GCStats, error) {
	return s.GCWith(func() (func(ActionID) bool, error) { return keep, nil })
}

// GCWith is GC with roots computed under its exclusive lock: roots is
// called once the lock is held, so what it reads (run logs) cannot gain a
// committed artifact that it misses; if it fails, nothing is removed.
func (s *Store) GCWith(roots func() (keep func(ActionID) bool, err error)) (GCStats, error) {
	var st GCStats
	if s.readOnly {
		return st, s.readOnlyError("collecting garbage")
	}
	l, err := lockFile(filepath.Join(s.root, "locks", "gc"), true)
	if errors.Is(err, errNoLocks) {
		return st, fmt.Errorf("artifact store %s: gc needs file locks to run beside writers, and %w; run gc on a machine that mounts the store with locking", s.root, err)
	}
	if err != nil {
		return st, fmt.Errorf("artifact store %s: %w", s.root, err)
	}
	defer l.Unlock()

	keep, err := roots()
	if err != nil {
		return st, fmt.Errorf("gc of %s removed nothing: %w", s.root, err)
	}
	ids, err := s.Entries()
	if err != nil {
		return st, fmt.Errorf("gc: listing index: %w", err)
	}
	live := map[OutputID]bool{}
	committed := map[ActionID]bool{}
	for _, id := range ids {
		data, rerr := os.ReadFile(s.indexPath(id))
		art, derr := decodeIndex(data)
		if rerr != nil || derr != nil || !keep(id) {
			if err := os.Remove(s.indexPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return st, fmt.Errorf("gc: %w", err)
			}
			st.Entries++
			continue
		}
		st.Kept++
		committed[id] = true
		for _, f := range art.Files {
			live[f.ID] = true
		}
	}
	err = filepath.WalkDir(filepath.Join(s.root, "blobs"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		o, perr := parseOutputID(d.Name())
		if perr == nil && live[o] {
			return nil
		}
		if info, err := d.Info(); err == nil {
			st.Bytes += info.Size()
		}
		st.Blobs++
		return os.Remove(path)
	})
	if err != nil {
		return st, fmt.Errorf("gc: blobs: %w", err)
	}
	tmps, _ := os.ReadDir(filepath.Join(s.root, "tmp"))
	for _, t := range tmps {
		os.RemoveAll(filepath.Join(s.root, "tmp", t.Name()))
	}
	works, _ := os.ReadDir(filepath.Join(s.root, "work"))
	for _, w := range works {
		id, err := ParseActionID(w.Name())
		if err == nil && keep(id) && !committed[id] {
			continue // may resume from its checkpoints
		}
		if err == nil && s.busy(id) {
			continue // another process is running this stage now
		}
		if err := os.RemoveAll(filepath.Join(s.root, "work", w.Name())); err == nil {
			st.WorkDirs++
		}
	}
	return st, nil
}

// busy reports whether another process holds the action's lock.
func (s *Store) busy(a ActionID) bool {
	path := filepath.Join(s.root, "locks", a.String())
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	// The lock file stays: deleting a flock file races with a process
	// that has just opened it.
	flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

package artifacts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Store is an artifact store rooted at one directory. It is safe for use by
// several goroutines and several processes at once.
type Store struct {
	root string
	// Logf receives one line per miss reason and repair; nil discards.
	Logf func(format string, args ...any)

	noLocksOnce sync.Once // the no-flock warning is said once
}

// File is one named file of an artifact.
type File struct {
	Name string
	ID   OutputID
	Size int64
}

// Artifact is a verified index entry: every blob it names existed with the
// recorded size and hash when it was read.
type Artifact struct {
	Action ActionID
	Stage  string
	Files  []File // sorted by name
	store  *Store
}

// Miss explains why an action has no usable artifact.
type Miss struct {
	Action ActionID
	Reason string
}

func (m *Miss) Error() string {
	return fmt.Sprintf("artifact %s: miss: %s", m.Action.Short(), m.Reason)
}

// IsMiss reports whether err is a cache miss (as opposed to an I/O failure of
// the store itself).
func IsMiss(err error) bool {
	var m *Miss
	return errors.As(err, &m)
}

// Open opens (creating if needed) a store at root and checks it is writable.
func Open(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w", root, err)
	}
	for _, d := range []string{"blobs", "index", "work", "tmp", "locks"} {
		if err := os.MkdirAll(filepath.Join(abs, d), 0o755); err != nil {
			return nil, fmt.Errorf("artifact store %s is not writable (set ROUTEBENCH_STORE to a writable directory): %w", abs, err)
		}
	}
	probe, err := os.CreateTemp(filepath.Join(abs, "tmp"), ".probe-*")
	if err != nil {
		return nil, fmt.Errorf("artifact store %s is not writable (set ROUTEBENCH_STORE to a writable directory): %w", abs, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return &Store{root: abs}, nil
}

// Root is the store's directory.
func (s *Store) Root() string { return s.root }

func (s *Store) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

func (s *Store) blobPath(o OutputID) string {
	h := o.String()
	return filepath.Join(s.root, "blobs", h[:2], h)
}

func (s *Store) indexPath(a ActionID) string {
	h := a.String()
	return filepath.Join(s.root, "index", h[:2], h)
}

// WorkDir is the per-action directory a running stage may use for outputs
// and scratch state (checkpoints). It survives interruption so a rerun can
// resume, and is removed once the artifact is committed.
func (s *Store) WorkDir(a ActionID) string { return filepath.Join(s.root, "work", a.String()) }

// Get returns the verified artifact for an action, or a *Miss saying why
// there is none. Damage found on the way is logged and never served.
func (s *Store) Get(a ActionID) (*Artifact, error) {
	data, err := os.ReadFile(s.indexPath(a))
	if errors.Is(err, os.ErrNotExist) {
		return nil, &Miss{a, "not in the store"}
	}
	if err != nil {
		return nil, s.miss(a, "index entry unreadable: %v", err)
	}
	art, err := decodeIndex(data)
	if err != nil {
		return nil, s.miss(a, "bad index entry: %v", err)
	}
	if art.Action != a {
		return nil, s.miss(a, "index entry names action %s", art.Action.Short())
	}
	for _, f := range art.Files {
		if reason := s.verifyBlob(f); reason != "" {
			return nil, s.miss(a, "file %q: %s", f.Name, reason)
		}
	}
	art.store = s
	return art, nil
}

func (s *Store) miss(a ActionID, format string, args ...any) *Miss {
	m := &Miss{a, fmt.Sprintf(format, args...)}
	s.logf("store: %v (will recompute)", m)
	return m
}

// verifyBlob returns "" when the blob holds exactly the recorded bytes.
func (s *Store) verifyBlob(f File) string {
	path := s.blobPath(f.ID)
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "blob " + f.ID.Short() + " is missing"
	}
	if err != nil {
		return "blob unreadable: " + err.Error()
	}
	if st.Size() != f.Size {
		return fmt.Sprintf("blob %s has %d bytes, want %d (truncated or overwritten)", f.ID.Short(), st.Size(), f.Size)
	}
	id, _, err := HashFile(path)
	if err != nil {
		return "blob unreadable: " + err.Error()
	}
	if id != f.ID {
		return fmt.Sprintf("blob %s content hashes to %s (corrupted)", f.ID.Short(), id.Short())
	}
	return ""
}

// Path is the read-only path of a named file of the artifact.
func (a *Artifact) Path(name string) (string, error) {
	for _, f := range a.Files {
		if f.Name == name {
			return a.store.blobPath(f.ID), nil
		}
	}
	return "", fmt.Errorf("artifact %s of stage %s has no file %q (files: %s)", a.Action.Short(), a.Stage, name, strings.Join(a.Names(), ", "))
}

// Names lists the artifact's file names in order.
func (a *Artifact) Names() []string {
	n := make([]string, len(a.Files))
	for i, f := range a.Files {
		n[i] = f.Name
	}
	return n
}

// ReadFile returns the content of a named file.
func (a *Artifact) ReadFile(name string) ([]byte, error) {
	p, err := a.Path(name)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// Size is the total size of the artifact's files.
func (a *Artifact) Size() int64 {
	var n int64
	for _, f := range a.Files {
		n += f.Size
	}
	return n
}

// Put stores every regular file under dir (names relative to dir, with '/'
// separators) as the artifact of action a, index entry last. dir is left
// in place; the caller removes it.
func (s *Store) Put(a ActionID, stage string, dir string) (*Artifact, error) {
	shared, err := s.lockOrWarn(filepath.Join(s.root, "locks", "gc"), false)
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w", s.root, err)
	}
	defer shared.Unlock()

	var files []File
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		f, err := s.putBlob(path)
		if err != nil {
			return err
		}
		f.Name = filepath.ToSlash(rel)
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("storing output of stage %s: %w", stage, err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	art := &Artifact{Action: a, Stage: stage, Files: files, store: s}
	entry, err := encodeIndex(art)
	if err != nil {
		return nil, fmt.Errorf("storing output of stage %s: %w", stage, err)
	}
	idx := s.indexPath(a)
	if err := os.MkdirAll(filepath.Dir(idx), 0o755); err != nil {
		return nil, fmt.Errorf("storing output of stage %s: %w", stage, err)
	}
	if _, err := writeAtomic(filepath.Dir(idx), idx, strings.NewReader(entry), 0o644); err != nil {
		return nil, fmt.Errorf("storing index entry of stage %s: %w", stage, err)
	}
	return art, nil
}

// putBlob hashes src and stores it by content unless a verified copy exists.
func (s *Store) putBlob(src string) (File, error) {
	id, size, err := HashFile(src)
	if err != nil {
		return File{}, err
	}
	f := File{ID: id, Size: size}
	if s.verifyBlob(f) == "" {
		return f, nil
	}
	dst := s.blobPath(id)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return f, err
	}
	in, err := os.Open(src)
	if err != nil {
		return f, err
	}
	defer in.Close()
	// Hash while copying: if src changed since it was hashed, the blob
	// would not match its name, so check before renaming it into place.
	hr := newHashingReader(in)
	n, err := writeAtomic(filepath.Dir(dst), dst, hr, 0o444)
	if err != nil {
		return f, err
	}
	if n != size || hr.id() != id {
		os.Remove(dst)
		return f, fmt.Errorf("%s changed while it was being stored", src)
	}
	return f, nil
}

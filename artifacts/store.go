package artifacts

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Store is an artifact store rooted at one directory. It is safe for use by
// several goroutines and several processes at once.
type Store struct {
	root string
	// Logf receives one line per miss reason and repair; nil discards.
	Logf func(format string, args ...any)

	noLocksOnce sync.Once // the no-flock warning is said once
	readOnly    bool      // OpenReadOnly: creates nothing, writes nothing
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

// notInStore is the reason of a miss whose action has no index entry: the
// only miss that is not damage.
const notInStore = "not in the store"

// Damaged says the action had an index entry that failed verification (a
// bad entry, a missing, truncated or corrupted blob), rather than none: a
// run that commits the action repairs it.
func (m *Miss) Damaged() bool { return m.Reason != notInStore }

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
// The root is created with DirPerm less the umask; the directories below it
// take the root's mode and group (MkdirAll), so a group store stays one.
func Open(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w", root, err)
	}
	notWritable := func(err error) error {
		return fmt.Errorf("artifact store %s is not writable (set ROUTEBENCH_STORE to a writable directory; for a store a group shares, `routebench store check` names the directories a member cannot write, and the fix): %w", abs, err)
	}
	if err := os.MkdirAll(abs, DirPerm); err != nil {
		return nil, notWritable(err)
	}
	shareGroup(abs)
	s := &Store{root: abs}
	for _, d := range []string{"blobs", "index", "work", "tmp", "locks"} {
		if err := s.MkdirAll(filepath.Join(abs, d)); err != nil {
			return nil, notWritable(err)
		}
	}
	for _, d := range []string{"blobs", "index", "work", "tmp", "locks", "runs"} {
		shareGroup(filepath.Join(abs, d))
	}
	probe, err := os.CreateTemp(filepath.Join(abs, "tmp"), ".probe-*")
	if err != nil {
		return nil, notWritable(err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return s, nil
}

// OpenReadOnly opens the store at root for a command that only reads it
// (plan, status, slurm status and cancel, cat, gate): it creates nothing,
// not even the root (a store that does not exist yet holds nothing: unlike
// OpenExisting, plan and status answer for a store not made yet), so that
// such a command, under whatever umask, cannot leave a group store with a
// directory the group cannot write. Writes through it fail.
func OpenReadOnly(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w", root, err)
	}
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("artifact store %s: %w (set --store or ROUTEBENCH_STORE to the store's directory)", abs, err)
	case !st.IsDir():
		return nil, fmt.Errorf("artifact store %s is not a directory (set --store or ROUTEBENCH_STORE to the store's directory)", abs)
	}
	return &Store{root: abs, readOnly: true}, nil
}

// readOnlyError is a write through a store opened read-only: a command
// that claims to only read the store tried to change it.
func (s *Store) readOnlyError(what string) error {
	return fmt.Errorf("artifact store %s: %s: the store was opened read-only, by a command that only reads it (a bug: open it with artifacts.Open)", s.root, what)
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
// there is none. Damage found on the way is logged and never served. Each
// call is one lookup: it hashes every blob it serves, in full (a blob
// named by several files once).
func (s *Store) Get(a ActionID) (*Artifact, error) { return s.NewLookup(a).Get() }

// A Lookup is one logical lookup of an action that may take several Gets:
// the runner's Get before it waits for the action lock and its Get after
// (another process may have committed the action meanwhile). A blob that an
// earlier Get of the same Lookup hashed and found good is not hashed again
// if its file is provably the same version: same device, inode, size,
// mtime and ctime as when it was hashed (see blobStamp). Any write,
// truncate, chmod or rename over the blob changes that stamp, so a flipped
// byte is still a miss; what the Lookup trusts between its Gets is the
// kernel's ctime, not bytes hashed earlier. The memo lives and dies with
// the Lookup (never the Store or the process): every new lookup hashes
// everything again.
type Lookup struct {
	s      *Store
	a      ActionID
	hashed map[OutputID]blobStamp // blobs found good, and the version hashed
}

// NewLookup starts a lookup of action a; call Get on it one or more times.
func (s *Store) NewLookup(a ActionID) *Lookup {
	return &Lookup{s: s, a: a, hashed: map[OutputID]blobStamp{}}
}

// Get is Store.Get, reusing the verification of unchanged blobs from the
// Lookup's earlier Gets.
func (l *Lookup) Get() (*Artifact, error) {
	s, a := l.s, l.a
	data, err := os.ReadFile(s.indexPath(a))
	if errors.Is(err, os.ErrNotExist) {
		return nil, &Miss{a, notInStore}
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
	// Within one Get a blob is hashed once, even if several files name it.
	good := map[OutputID]int64{}
	for _, f := range art.Files {
		if size, ok := good[f.ID]; ok && size == f.Size {
			continue
		}
		if reason := s.verifyBlob(f, l.hashed); reason != "" {
			return nil, s.miss(a, "file %q: %s", f.Name, reason)
		}
		good[f.ID] = f.Size
	}
	art.store = s
	return art, nil
}

func (s *Store) miss(a ActionID, format string, args ...any) *Miss {
	m := &Miss{a, fmt.Sprintf(format, args...)}
	// No promise of what happens next: a job that runs one stage never
	// computes its inputs; the runner says what it does.
	s.logf("store: %v (never served)", m)
	return m
}

// verifyBlob returns "" when the blob holds exactly the recorded bytes.
// With a memo (a Lookup's), a blob whose stamp matches the memo's is good
// without hashing, and a blob found good is added with the stamp it had
// before and after hashing (only if the two agree and the version is
// settled, see blobStamp).
func (s *Store) verifyBlob(f File, memo map[OutputID]blobStamp) string {
	path := s.blobPath(f.ID)
	fd, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "blob " + f.ID.Short() + " is missing"
	}
	if err != nil {
		return "blob unreadable: " + err.Error()
	}
	defer fd.Close()
	// Stat, hash and stat again the same open file, so that the stamp
	// describes the bytes hashed even if the path is renamed over meanwhile.
	st, err := fd.Stat()
	if err != nil {
		return "blob unreadable: " + err.Error()
	}
	if st.Size() != f.Size {
		return fmt.Sprintf("blob %s has %d bytes, want %d (truncated or overwritten)", f.ID.Short(), st.Size(), f.Size)
	}
	before, stamped := stampOf(st)
	if stamped && memo != nil {
		if m, ok := memo[f.ID]; ok && m == before {
			return ""
		}
	}
	if onHash != nil {
		onHash(f.ID)
	}
	h := sha256.New()
	if _, err := io.Copy(h, fd); err != nil {
		return "blob unreadable: " + err.Error()
	}
	var id OutputID
	copy(id[:], h.Sum(nil))
	if id != f.ID {
		return fmt.Sprintf("blob %s content hashes to %s (corrupted)", f.ID.Short(), id.Short())
	}
	if stamped && memo != nil {
		if st2, err := fd.Stat(); err == nil {
			if after, ok := stampOf(st2); ok && after == before && before.settled(now()) {
				memo[f.ID] = before
			}
		}
	}
	return ""
}

// Test seams: onHash sees every blob verifyBlob hashes; now is the clock
// that decides whether a blob's version is settled.
var (
	onHash func(OutputID)
	now    = time.Now
)

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

// Put stores every regular file under dir (names relative to dir, with '/'
// separators) as the artifact of action a, index entry last. dir is left
// in place; the caller removes it.
func (s *Store) Put(a ActionID, stage string, dir string) (*Artifact, error) {
	art, _, err := s.put(a, stage, dir, false)
	return art, err
}

func (s *Store) put(a ActionID, stage string, dir string, once bool) (*Artifact, bool, error) {
	if s.readOnly {
		return nil, false, s.readOnlyError("storing output of stage " + stage)
	}
	shared, err := s.lockOrWarn(filepath.Join(s.root, "locks", "gc"), false)
	if err != nil {
		return nil, false, fmt.Errorf("artifact store %s: %w", s.root, err)
	}
	defer shared.Unlock()

	files, err := walkOutputs(dir, s.putBlob)
	if err != nil {
		return nil, false, fmt.Errorf("storing output of stage %s: %w", stage, err)
	}
	art := &Artifact{Action: a, Stage: stage, Files: files, store: s}
	entry, err := encodeIndex(art)
	if err != nil {
		return nil, false, fmt.Errorf("storing output of stage %s: %w", stage, err)
	}
	kept, err := s.commitIndex(a, stage, entry, once)
	if err != nil {
		return nil, false, err
	}
	if kept != nil {
		return kept, true, nil
	}
	return art, false, nil
}

// Describe lists the files under dir as Put would index them (the same
// names, hashes and sizes, the same refusal of anything but regular files)
// without storing anything: what a verify run compares with the cached
// entry before it decides to commit.
func Describe(a ActionID, stage string, dir string) (*Artifact, error) {
	files, err := walkOutputs(dir, func(path string) (File, error) {
		id, size, err := HashFile(path)
		return File{ID: id, Size: size}, err
	})
	if err != nil {
		return nil, fmt.Errorf("describing output of stage %s: %w", stage, err)
	}
	return &Artifact{Action: a, Stage: stage, Files: files}, nil
}

// walkOutputs calls file on every regular file under dir and names the
// result by its path relative to dir, with '/' separators, sorted by name.
func walkOutputs(dir string, file func(path string) (File, error)) ([]File, error) {
	var files []File
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
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
		f, err := file(path)
		if err != nil {
			return err
		}
		f.Name = filepath.ToSlash(rel)
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}

// putBlob hashes src and stores it by content unless a verified copy exists.
func (s *Store) putBlob(src string) (File, error) {
	id, size, err := HashFile(src)
	if err != nil {
		return File{}, err
	}
	f := File{ID: id, Size: size}
	if s.verifyBlob(f, nil) == "" {
		return f, nil
	}
	dst := s.blobPath(id)
	if err := s.MkdirAll(filepath.Dir(dst)); err != nil {
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

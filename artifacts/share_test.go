package artifacts

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// withUmask runs the test under a umask (process-wide: these tests are not
// parallel) and restores the old one.
func withUmask(t *testing.T, mask int) {
	t.Helper()
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// groupStore makes an empty store root as a lab would: group-writable,
// setgid, and (as root) in a group other than the caller's, so that a
// directory created below it in the caller's group is told apart.
func groupStore(t *testing.T) (root string, gid uint32) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "store")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(root, -1, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o775|fs.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(root)
	if err != nil {
		t.Fatal(err)
	}
	gid, _ = groupOf(st)
	return root, gid
}

// Under umask 022, every directory the store creates (its top ones, a
// blob's and an index entry's, a work dir) takes the root's mode, setgid
// bit and group: a group member can write in each, and store check finds
// nothing. The control: a directory made the old way (os.MkdirAll, the
// caller's umask) is what store check names.
func TestStoreDirsTakeTheRootsModeWhateverTheUmask(t *testing.T) {
	withUmask(t, 0o022)
	root, gid := groupStore(t)
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	putFiles(t, s, actionFor("shared"), map[string][]byte{"a": []byte("alpha")})
	if err := s.MkdirAll(filepath.Join(s.WorkDir(actionFor("shared")), "job1.attempt0", "out")); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == root {
			return err
		}
		n++
		st, err := d.Info()
		if err != nil {
			return err
		}
		if got := st.Mode() & (fs.ModePerm | fs.ModeSetgid); got != 0o775|fs.ModeSetgid {
			t.Errorf("%s: mode %v, want the root's %v", path, got, 0o775|fs.ModeSetgid)
		}
		if g, _ := groupOf(st); g != gid {
			t.Errorf("%s: group %d, want the root's %d", path, g, gid)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 9 { // blobs, index, work, tmp, locks, a blob's and an entry's dir, work/<key>/<attempt>/out
		t.Fatalf("only %d directories under the store: the test looked at too little", n)
	}
	c, err := CheckShared(root)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Group || len(c.Problems) != 0 {
		t.Fatalf("store check of a store made under umask 022: group %v, problems %+v, want a group store with none", c.Group, c.Problems)
	}
	// The control: what the store did before (os.MkdirAll with the
	// caller's umask) is found, with its owner and the fix.
	old := filepath.Join(root, "index", "ff")
	if err := os.MkdirAll(old, DirPerm); err != nil {
		t.Fatal(err)
	}
	c, err = CheckShared(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Problems) != 1 || c.Problems[0].Dir != old || !strings.Contains(c.Problems[0].Issue, "not group-writable") {
		t.Fatalf("store check with %s made under umask 022: %+v, want it named not group-writable", old, c.Problems)
	}
	if uid, _ := ownerOf(mustStat(t, old)); c.Problems[0].UID != uid {
		t.Errorf("problem's owner %d, want %d", c.Problems[0].UID, uid)
	}
	if fix := c.Fix(); !strings.Contains(fix, "chmod -R g+rwX "+root) || !strings.Contains(fix, "chmod g+s") {
		t.Errorf("fix %q does not make the store group-writable and setgid", fix)
	}
}

func mustStat(t *testing.T, path string) fs.FileInfo {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A command that only reads the store creates nothing in it, not even the
// root; a write through such a store fails. The control: Open on the same
// empty root does create the top directories (so an empty root after
// OpenReadOnly is not for want of looking).
func TestOpenReadOnlyCreatesNothing(t *testing.T) {
	withUmask(t, 0o022)
	root, _ := groupStore(t)
	ro, err := OpenReadOnly(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.Get(actionFor("x")); !IsMiss(err) {
		t.Fatalf("read-only Get on an empty store: %v, want a miss", err)
	}
	ro.Revalidate(actionFor("x"))
	if _, err := ro.Put(actionFor("x"), "test", t.TempDir()); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("Put through a read-only store: %v, want refused", err)
	}
	if _, err := ro.ActionLock(actionFor("x")); err == nil {
		t.Fatal("ActionLock through a read-only store: no error")
	}
	if err := ro.MkdirAll(filepath.Join(root, "runs")); err == nil {
		t.Fatal("MkdirAll through a read-only store: no error")
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Fatalf("OpenReadOnly and a lookup created %d entries in the store", len(ents))
	}
	missing := filepath.Join(t.TempDir(), "none")
	if _, err := OpenReadOnly(missing); err != nil {
		t.Fatalf("OpenReadOnly of a store not made yet: %v, want an empty store", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("OpenReadOnly created the store's root %s", missing)
	}
	file := filepath.Join(t.TempDir(), "file")
	writeFiles(t, filepath.Dir(file), map[string][]byte{"file": nil})
	if _, err := OpenReadOnly(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("OpenReadOnly of a file: %v", err)
	}
	if _, err := Open(root); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(root); len(ents) < 5 {
		t.Fatalf("control: Open created %d entries, want the top directories", len(ents))
	}
}

// A store one user keeps for themselves (not group-writable) is not a
// group store: nothing is checked below it.
func TestCheckSharedOneUserStore(t *testing.T) {
	withUmask(t, 0o022)
	root := filepath.Join(t.TempDir(), "store")
	if _, err := Open(root); err != nil {
		t.Fatal(err)
	}
	c, err := CheckShared(root)
	if err != nil {
		t.Fatal(err)
	}
	if c.Group || len(c.Problems) != 0 {
		t.Fatalf("a store made under umask 022: group %v, problems %+v, want a one-user store", c.Group, c.Problems)
	}
}

// The store's own miss message promises nothing (a job that runs one
// stage never recomputes its input); a damaged entry is told apart from
// one that is not there.
func TestMissSaysWhatItIs(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	s.Logf = func(format string, args ...any) { logged = append(logged, format) }
	a := actionFor("m")
	_, err = s.Get(a)
	if m, ok := err.(*Miss); !ok || m.Damaged() {
		t.Fatalf("absent entry: %v, want a miss that is not damage", err)
	}
	art := putFiles(t, s, a, map[string][]byte{"f": []byte("data")})
	p, _ := art.Path("f")
	chmodWrite(t, p, func(p string) error { return os.WriteFile(p, []byte("DATA"), 0o644) })
	_, err = s.Get(a)
	if m, ok := err.(*Miss); !ok || !m.Damaged() {
		t.Fatalf("corrupted blob: %v, want a damaged miss", err)
	}
	for _, l := range logged {
		if strings.Contains(l, "recompute") {
			t.Errorf("the store's log %q promises a recompute", l)
		}
	}
	if len(logged) == 0 {
		t.Fatal("the corrupted blob was not logged")
	}
}

package artifacts

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// PutOnce: the first complete commit wins; a later one gets it back; a
// damaged entry is replaced. Put (forced runs) still replaces.
func TestPutOnceKeepsTheFirstCommit(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := actionFor("stage")
	put := func(content string) (*Artifact, bool) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string][]byte{"run.json": []byte(content)})
		art, existed, err := s.PutOnce(a, "test", dir)
		if err != nil {
			t.Fatal(err)
		}
		return art, existed
	}
	first, existed := put("first")
	if existed {
		t.Fatal("the first commit reported an existing entry")
	}
	second, existed := put("second")
	if !existed || second.Files[0].ID != first.Files[0].ID {
		t.Fatalf("second commit: existed %v, file %s: want the first commit's %s kept", existed, second.Files[0].ID.Short(), first.Files[0].ID.Short())
	}
	got, err := s.Get(a)
	if err != nil || got.Files[0].ID != first.Files[0].ID {
		t.Fatalf("Get after two commits: %v, %v: want the first", got, err)
	}
	// A torn entry is repaired by the next commit.
	if err := os.WriteFile(s.indexPath(a), []byte("routebench-index v1\nact"), 0o644); err != nil {
		t.Fatal(err)
	}
	third, existed := put("third")
	if existed {
		t.Fatal("a damaged entry was kept")
	}
	if got, err := s.Get(a); err != nil || got.Files[0].ID != third.Files[0].ID {
		t.Fatalf("Get after the repair: %v, %v", got, err)
	}
	// Put replaces, as a forced run wants.
	forced := putFiles(t, s, a, map[string][]byte{"run.json": []byte("forced")})
	if got, err := s.Get(a); err != nil || got.Files[0].ID != forced.Files[0].ID {
		t.Fatalf("Get after Put: %v, %v: want the forced commit", got, err)
	}
}

// Under umask 002 a new store's directories are group-writable and setgid,
// so another user of the group can write beside its owner.
func TestStoreDirsAreGroupShared(t *testing.T) {
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	root := filepath.Join(t.TempDir(), "store")
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"", "index", "blobs", "work", "locks"} {
		st, err := os.Stat(filepath.Join(root, d))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode()&fs.ModeSetgid == 0 || st.Mode().Perm()&0o070 != 0o070 {
			t.Errorf("%s: mode %v, want group rwx and setgid", filepath.Join(root, d), st.Mode())
		}
	}
	putFiles(t, s, actionFor("x"), map[string][]byte{"f": []byte("x")})
	shard := filepath.Dir(s.indexPath(actionFor("x")))
	if st, err := os.Stat(shard); err != nil || st.Mode()&fs.ModeSetgid == 0 || st.Mode().Perm()&0o020 == 0 {
		t.Errorf("index shard %s: %v %v: want it to inherit setgid and be group-writable", shard, st.Mode(), err)
	}
}

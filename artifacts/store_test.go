package artifacts

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func actionFor(s string) ActionID { return ActionID(sha256.Sum256([]byte(s))) }

func writeFiles(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func putFiles(t testing.TB, s *Store, a ActionID, files map[string][]byte) *Artifact {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	art, err := s.Put(a, "test", dir)
	if err != nil {
		t.Fatal(err)
	}
	return art
}

func TestPutGetRoundTrip(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := actionFor("x")
	if _, err := s.Get(a); !IsMiss(err) {
		t.Fatalf("empty store: want miss, got %v", err)
	}
	files := map[string][]byte{"b.txt": []byte("beta"), "a.bin": {0, 1, 2}, "sub/c": []byte("gamma")}
	put := putFiles(t, s, a, files)
	got, err := s.Get(a)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Names(), ",") != "a.bin,b.txt,sub/c" {
		t.Fatalf("names %v", got.Names())
	}
	for name, want := range files {
		data, err := got.ReadFile(name)
		if err != nil || !bytes.Equal(data, want) {
			t.Fatalf("%s: got %q, %v", name, data, err)
		}
	}
	if got.Digest() != put.Digest() {
		t.Fatal("digest differs between put and get")
	}
	// Identical content under another action shares the blob.
	putFiles(t, s, actionFor("y"), map[string][]byte{"other": []byte("beta")})
	blobs := 0
	filepath.WalkDir(filepath.Join(s.Root(), "blobs"), func(p string, d os.DirEntry, err error) error {
		if !d.IsDir() {
			blobs++
		}
		return nil
	})
	if blobs != 3 {
		t.Fatalf("want 3 shared blobs, found %d", blobs)
	}
}

// TestCorruptionDrill damages a stored artifact in every way the issue
// names; each must be a miss with a reason, and a re-put must repair it.
func TestCorruptionDrill(t *testing.T) {
	damages := map[string]func(t *testing.T, s *Store, art *Artifact){
		"truncate blob": func(t *testing.T, s *Store, art *Artifact) {
			chmodWrite(t, s.blobPath(art.Files[0].ID), func(p string) error { return os.Truncate(p, 10) })
		},
		"flip one byte": func(t *testing.T, s *Store, art *Artifact) {
			chmodWrite(t, s.blobPath(art.Files[0].ID), func(p string) error {
				b, _ := os.ReadFile(p)
				b[len(b)/2] ^= 0x40
				return os.WriteFile(p, b, 0o644)
			})
		},
		"zero-fill blob": func(t *testing.T, s *Store, art *Artifact) {
			chmodWrite(t, s.blobPath(art.Files[0].ID), func(p string) error {
				st, _ := os.Stat(p)
				return os.WriteFile(p, make([]byte, st.Size()), 0o644)
			})
		},
		"delete blob": func(t *testing.T, s *Store, art *Artifact) {
			if err := os.Remove(s.blobPath(art.Files[0].ID)); err != nil {
				t.Fatal(err)
			}
		},
		"bad index line": func(t *testing.T, s *Store, art *Artifact) {
			p := s.indexPath(art.Action)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte("file "), []byte("fiel "), 1), 0o644)
		},
		"truncated index": func(t *testing.T, s *Store, art *Artifact) {
			os.Truncate(s.indexPath(art.Action), 30)
		},
		"zero-filled index": func(t *testing.T, s *Store, art *Artifact) {
			p := s.indexPath(art.Action)
			st, _ := os.Stat(p)
			os.WriteFile(p, make([]byte, st.Size()), 0o644)
		},
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			s, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			var logged []string
			s.Logf = func(f string, args ...any) { logged = append(logged, f) }
			a := actionFor(name)
			payload := map[string][]byte{"data": bytes.Repeat([]byte("routebench"), 1000)}
			art := putFiles(t, s, a, payload)
			damage(t, s, art)
			_, err = s.Get(a)
			var miss *Miss
			if !IsMiss(err) {
				t.Fatalf("damaged artifact was served (err=%v)", err)
			}
			miss = err.(*Miss)
			if miss.Reason == "" || len(logged) == 0 {
				t.Fatalf("miss without a logged reason: %+v", miss)
			}
			// The recompute: a fresh put repairs the entry and the blob.
			putFiles(t, s, a, payload)
			got, err := s.Get(a)
			if err != nil {
				t.Fatalf("after recompute: %v", err)
			}
			data, _ := got.ReadFile("data")
			if !bytes.Equal(data, payload["data"]) {
				t.Fatal("repaired artifact has wrong bytes")
			}
		})
	}
}

// chmodWrite lets a test damage a read-only blob.
func chmodWrite(t *testing.T, p string, f func(string) error) {
	t.Helper()
	os.Chmod(p, 0o644)
	if err := f(p); err != nil {
		t.Fatal(err)
	}
}

func TestGCKeepsOnlyLiveEntriesAndTheirBlobs(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	keep, drop := actionFor("keep"), actionFor("drop")
	putFiles(t, s, keep, map[string][]byte{"f": []byte("shared"), "g": []byte("kept only")})
	putFiles(t, s, drop, map[string][]byte{"f": []byte("shared"), "h": []byte("dropped only")})
	os.MkdirAll(s.WorkDir(drop), 0o755)
	st, err := s.GC(func(a ActionID) bool { return a == keep })
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 1 || st.Blobs != 1 || st.WorkDirs != 1 {
		t.Fatalf("gc removed %+v, want 1 entry, 1 blob, 1 work dir", st)
	}
	if _, err := s.Get(keep); err != nil {
		t.Fatalf("kept entry damaged by gc: %v", err)
	}
	if _, err := s.Get(drop); !IsMiss(err) {
		t.Fatalf("dropped entry still served: %v", err)
	}
}

func TestOpenUnwritableStore(t *testing.T) {
	if os.Getuid() == 0 {
		// root ignores permission bits; a path under a file is unwritable for anyone.
		f := filepath.Join(t.TempDir(), "file")
		os.WriteFile(f, nil, 0o644)
		_, err := Open(filepath.Join(f, "store"))
		if err == nil || !strings.Contains(err.Error(), "ROUTEBENCH_STORE") {
			t.Fatalf("want an error naming ROUTEBENCH_STORE, got %v", err)
		}
		return
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o555)
	if _, err := Open(filepath.Join(dir, "store")); err == nil {
		t.Fatal("unwritable store opened")
	}
}

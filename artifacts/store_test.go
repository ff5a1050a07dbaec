package artifacts

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	// A dead attempt's dir under a committed live key: never read again.
	leftover := filepath.Join(s.WorkDir(keep), "job7.attempt0.node1.pid99", "scratch")
	os.MkdirAll(leftover, 0o755)
	// A live key not committed yet: its attempt may resume from it.
	pending := actionFor("pending")
	resume := filepath.Join(s.WorkDir(pending), "job8.attempt0.node1.pid98", "scratch")
	os.MkdirAll(resume, 0o755)
	st, err := s.GC(func(a ActionID) bool { return a == keep || a == pending })
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 1 || st.Blobs != 1 || st.WorkDirs != 2 {
		t.Fatalf("gc removed %+v, want 1 entry, 1 blob, 2 work dirs", st)
	}
	if _, err := os.Stat(leftover); err == nil {
		t.Fatal("gc kept a dead attempt's dir under a committed key")
	}
	if _, err := os.Stat(resume); err != nil {
		t.Fatalf("gc removed the checkpoints of a live key not committed yet: %v", err)
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

// countHashes records which blobs verifyBlob hashes, and pretends every
// blob was written long ago (so that the Lookup may trust its stamp).
func countHashes(t *testing.T) map[OutputID]int {
	n := map[OutputID]int{}
	onHash = func(o OutputID) { n[o]++ }
	now = func() time.Time { return time.Now().Add(time.Hour) }
	t.Cleanup(func() { onHash, now = nil, time.Now })
	return n
}

// The runner's lock-wait path: the first Get of a Lookup misses on a
// missing blob, another process repairs it, the second Get hits; the blob
// that was good all along is hashed once in all, and a blob named by two
// files once per Get.
func TestLookupHashesEachBlobOnce(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hashes := countHashes(t)
	a := actionFor("lookup")
	files := map[string][]byte{"big": []byte("the big one"), "copy": []byte("the big one"), "zmeta": []byte("meta")}
	art := putFiles(t, s, a, files)
	bigID, metaID := art.Files[0].ID, art.Files[2].ID
	clear(hashes) // Put's own check of an existing blob
	metaPath := s.blobPath(metaID)
	if err := os.Remove(metaPath); err != nil {
		t.Fatal(err)
	}
	look := s.NewLookup(a)
	if _, err := look.Get(); !IsMiss(err) {
		t.Fatalf("first Get with a missing blob: want a miss, got %v", err)
	}
	putFiles(t, s, actionFor("other"), map[string][]byte{"m": files["zmeta"]}) // the repair
	delete(hashes, metaID)                                                     // the repair checked it too
	if _, err := look.Get(); err != nil {
		t.Fatalf("second Get after the repair: %v", err)
	}
	if hashes[bigID] != 1 || hashes[metaID] != 1 {
		t.Fatalf("one lookup hashed the good blob %d times and the repaired one %d times, want once each", hashes[bigID], hashes[metaID])
	}
	// A new lookup trusts nothing from the old one.
	if _, err := s.Get(a); err != nil {
		t.Fatal(err)
	}
	if hashes[bigID] != 2 {
		t.Fatalf("a new lookup hashed the blob %d times in all, want 2", hashes[bigID])
	}
}

// A blob changed between two Gets of one Lookup is hashed again: a flipped
// byte is a miss even if the writer restores the mtime (ctime still moves),
// and so is a blob renamed over by a same-size one.
func TestLookupRehashesChangedBlob(t *testing.T) {
	damages := map[string]func(t *testing.T, p string){
		"flip a byte, restore mtime": func(t *testing.T, p string) {
			st, _ := os.Stat(p)
			chmodWrite(t, p, func(p string) error {
				b, _ := os.ReadFile(p)
				b[3] ^= 1
				return os.WriteFile(p, b, 0o444)
			})
			os.Chmod(p, 0o444)
			if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		},
		"rename a same-size file over it": func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			b[0] ^= 1
			tmp := p + ".tmp"
			os.WriteFile(tmp, b, 0o444)
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			s, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			countHashes(t)
			a := actionFor(name)
			art := putFiles(t, s, a, map[string][]byte{"data": bytes.Repeat([]byte("routebench"), 100)})
			// Let the kernel's coarse ctime clock tick past the Put, so the
			// damage below gets a ctime of its own (the race the real clock's
			// racyWindow covers, which countHashes turns off).
			time.Sleep(50 * time.Millisecond)
			look := s.NewLookup(a)
			if _, err := look.Get(); err != nil {
				t.Fatal(err)
			}
			damage(t, s.blobPath(art.Files[0].ID))
			if _, err := look.Get(); !IsMiss(err) {
				t.Fatalf("a blob changed after the Lookup's first Get was served (err=%v)", err)
			}
		})
	}
}

// A blob changed less than racyWindow ago is never trusted between Gets:
// its next change could land in the same ctime tick. Within one Get it is
// still hashed once, though two files name it.
func TestLookupDoesNotTrustFreshBlobs(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hashes := countHashes(t)
	now = time.Now // the blob below was written just now
	a := actionFor("fresh")
	art := putFiles(t, s, a, map[string][]byte{"data": []byte("fresh"), "same": []byte("fresh")})
	clear(hashes) // Put's check of the blob it already had
	look := s.NewLookup(a)
	for range 2 {
		if _, err := look.Get(); err != nil {
			t.Fatal(err)
		}
	}
	if n := hashes[art.Files[0].ID]; n != 2 {
		t.Fatalf("a fresh blob named by two files was hashed %d times by two Gets, want 2", n)
	}
}

// When the roots cannot be computed (a damaged run log), gc removes nothing.
func TestGCWithFailingRootsRemovesNothing(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := actionFor("unrooted")
	putFiles(t, s, a, map[string][]byte{"f": []byte("x")})
	_, err = s.GCWith(func() (func(ActionID) bool, error) { return nil, os.ErrInvalid })
	if err == nil || !strings.Contains(err.Error(), "removed nothing") {
		t.Fatalf("want a refusal, got %v", err)
	}
	if _, err := s.Get(a); err != nil {
		t.Fatalf("gc removed an entry although its roots failed: %v", err)
	}
}

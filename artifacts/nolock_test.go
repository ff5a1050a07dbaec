package artifacts

import (
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// withoutFlock simulates a shared file system without a lock manager (an
// NFS mount answering ENOLCK) for the rest of the test.
func withoutFlock(t *testing.T) {
	saved := flock
	flock = func(int, int) error { return syscall.ENOLCK }
	t.Cleanup(func() { flock = saved })
}

// On such a file system the store still stores and verifies, warns once,
// and refuses to gc; writers racing on one action (two machines running
// the same stage) leave one complete, verified artifact.
func TestStoreWithoutFileLocks(t *testing.T) {
	withoutFlock(t)
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var logs []string
	var mu sync.Mutex
	s.Logf = func(format string, args ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	a := actionFor("shared")
	unlock, err := s.ActionLock(a)
	if err != nil {
		t.Fatalf("action lock without flock: %v", err)
	}
	unlock()

	// Eight writers, each with its own (say, volatile) content for the same action.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := t.TempDir()
			writeFiles(t, dir, map[string][]byte{"out": []byte(strings.Repeat(fmt.Sprint(w), 1<<16)), "same": []byte("x")})
			if _, err := s.Put(a, "test", dir); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("put without flock: %v", err)
	}
	art, err := s.Get(a)
	if err != nil {
		t.Fatalf("after racing writers: %v", err)
	}
	data, err := art.ReadFile("out")
	if err != nil || len(data) != 1<<16 || strings.Count(string(data), string(data[:1])) != 1<<16 {
		t.Fatalf("racing writers left a mixed or partial file (%d bytes, %v)", len(data), err)
	}

	if _, err := s.GC(func(ActionID) bool { return true }); err == nil || !strings.Contains(err.Error(), "gc needs file locks") {
		t.Fatalf("gc without flock: want a refusal, got %v", err)
	}
	warned := 0
	for _, l := range logs {
		if strings.Contains(l, "going on without locks") {
			warned++
		}
	}
	if warned != 1 {
		t.Fatalf("want one no-lock warning, got %d: %q", warned, logs)
	}
}

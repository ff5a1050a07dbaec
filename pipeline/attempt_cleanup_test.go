package pipeline

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// After a commit, a dead attempt of this host goes; a live one, this
// attempt's own name and another host's attempt stay.
func TestRemoveDeadAttempts(t *testing.T) {
	host := attemptHost()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	dead := cmd.Process.Pid
	work := t.TempDir()
	names := map[string]bool{ // name -> kept
		fmt.Sprintf("%s.pid%d.1", host, dead):              false,
		fmt.Sprintf("job7.attempt0.%s.pid%d", host, dead):  false,
		fmt.Sprintf("%s.pid%d.2", host, os.Getpid()):       true,
		fmt.Sprintf("otherhost-%s.pid%d.3", "x", dead):     true,
		fmt.Sprintf("job8.attempt1.elsewhere.pid%d", dead): true,
		"scratch": true,
	}
	for n := range names {
		if err := os.MkdirAll(filepath.Join(work, n, "scratch"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removeDeadAttempts(work, "self")
	for n, kept := range names {
		_, err := os.Stat(filepath.Join(work, n))
		if got := err == nil; got != kept {
			t.Errorf("%s: kept %v, want %v", n, got, kept)
		}
	}
}

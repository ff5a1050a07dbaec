package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// pidInName finds the ".pid<P>" an attempt name carries (attemptName).
var pidInName = regexp.MustCompile(`\.pid(\d+)(\.|$)`)

// removeDeadAttempts removes, after this attempt committed its key, the
// dirs of earlier attempts of the same key that ran on this host and
// whose process is gone (killed or crashed before committing): the key is
// committed, so their checkpoints will never be resumed. Attempts on other
// hosts, and live processes here, are left alone: another node's
// straggler may still be writing, and removing its files is what the
// per-attempt dirs exist to prevent.
func removeDeadAttempts(work, self string) {
	host := attemptHost()
	ents, err := os.ReadDir(work)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		m := pidInName.FindStringSubmatch(name)
		if name == self || m == nil || !strings.Contains(name, host+".pid"+m[1]) {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(filepath.Join(work, name))
		}
	}
}

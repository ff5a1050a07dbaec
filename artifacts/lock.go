package artifacts

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// errNoLocks: the store's file system does not implement flock (some NFS
// mounts without a lock manager answer ENOLCK). The store still works
// without locks, because every write is a rename of complete content-named
// files with the index entry last: two machines may then compute the same
// stage twice, but never corrupt it. GC is the exception (see GC).
var errNoLocks = errors.New("the file system does not support flock")

// flock is syscall.Flock; tests replace it to simulate such a file system.
var flock = syscall.Flock

func noLockSupport(err error) bool {
	return errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS)
}

// fileLock is an advisory flock: released by the kernel when the process
// dies, so it never goes stale the way PID files do.
type fileLock struct{ f *os.File }

// NoFlockEnv, set to 1, makes the store act as on a file system without
// flock (Lustre mounted noflock, NFS without a lock manager): every lock
// is refused as ENOLCK would refuse it. make test-slurm sets it to show
// that two attempts of one stage on two "nodes" leave one committed
// output without any lock.
const NoFlockEnv = "ROUTEBENCH_STORE_NOFLOCK"

func lockFile(path string, exclusive bool) (*fileLock, error) {
	if os.Getenv(NoFlockEnv) == "1" {
		return nil, fmt.Errorf("flock %s: %w (%s=1)", path, errNoLocks, NoFlockEnv)
	}
	// 0o666 less the umask: another user of a group-writable store must
	// be able to open the lock file too. flock needs no write access, so
	// a lock file someone else created under a stricter umask is opened
	// read-only.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if errors.Is(err, os.ErrPermission) {
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if noLockSupport(err) {
			return nil, fmt.Errorf("flock %s: %w (%w)", path, errNoLocks, err)
		}
		return nil, fmt.Errorf("flock %s: %w", path, err)
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// lockOrWarn takes a lock that protects only against duplicated work (the
// action lock, Put's shared GC lock): without flock support it warns once
// per store and goes on unlocked.
func (s *Store) lockOrWarn(path string, exclusive bool) (*fileLock, error) {
	l, err := lockFile(path, exclusive)
	if errors.Is(err, errNoLocks) {
		s.noLocksOnce.Do(func() {
			s.logf("artifact store %s: %v; going on without locks: a stage may be computed twice, never corrupted, and gc refuses to run", s.root, err)
		})
		return nil, nil
	}
	return l, err
}

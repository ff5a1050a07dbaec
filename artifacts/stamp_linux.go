package artifacts

import (
	"os"
	"syscall"
	"time"
)

// blobStamp identifies one version of a blob file. The kernel sets ctime
// on every write, truncate and chmod, and callers cannot set it back
// (utimes sets only atime and mtime); a rename over the path gives another
// inode. So while the stamp is unchanged, the bytes are the ones hashed
// when it was taken, unless a second change landed within the same ctime
// tick as the change before it: see settled.
type blobStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // ns since the epoch
}

func stampOf(fi os.FileInfo) (blobStamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return blobStamp{}, false
	}
	return blobStamp{
		dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
	}, true
}

// racyWindow: a file changed less than this long before a stamp was taken
// may change again within the same timestamp tick (coarse kernel clocks,
// file servers with second granularity) without its stamp changing, the
// "racy clean" problem git solves the same way.
const racyWindow = 2 * time.Second

// settled reports whether the stamp's version is old enough that any later
// change would show in ctime. A ctime in the future (a file server's clock
// ahead of ours) is not settled.
func (b blobStamp) settled(now time.Time) bool {
	return now.Sub(time.Unix(0, max(b.ctime, b.mtime))) > racyWindow
}

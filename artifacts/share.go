package artifacts

import (
	"io/fs"
	"os"
)

// DirPerm is the mode every store directory is created with, before the
// umask. One store serves several users of one Unix group (docs/cluster.md):
// with `umask 002` its directories are group-writable, and the store's top
// directories carry the setgid bit (shareGroup), which Linux passes on to
// every directory created below them, so what one user's job creates
// belongs to the store's group and another user's job can write beside it.
// Under the usual umask 022 a store stays a one-user store.
const DirPerm fs.FileMode = 0o775

// shareGroup sets the setgid bit on a store directory this user owns (mkdir
// ignores it in its mode argument on Linux). It is best effort: on a
// directory another user owns chmod fails and changes nothing, and the
// store still works for its owner.
func shareGroup(dir string) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() || st.Mode()&fs.ModeSetgid != 0 {
		return
	}
	os.Chmod(dir, st.Mode().Perm()|fs.ModeSetgid)
}

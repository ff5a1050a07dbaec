package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// DirPerm is the mode a store's root is created with, before the umask.
// Directories below it take their mode from the root instead (MkdirAll).
const DirPerm fs.FileMode = 0o775

// One store serves several users of one Unix group (docs/cluster.md): its
// root is given the group and `g+ws`. A directory one user creates below it
// must then be writable by the others whatever that user's umask, or one
// command run under umask 022 locks the group out of it (chmod g+ws on the
// root repairs nothing below). So the store creates its directories with
// the root's permission bits, setgid bit and group, and never with the
// caller's umask; a read-only command creates none (OpenReadOnly).

// MkdirAll creates dir and its missing parents as store directories: each
// new one gets the store root's permission bits (at least rwx for its
// owner; never the sticky bit, which would stop a group member replacing
// a damaged entry), its setgid bit and its group. Directories that exist
// are left as they are (`routebench store check` names any the group
// cannot write). dir may lie outside the store (the Slurm log dir beside
// it): it is still shared as the store is.
func (s *Store) MkdirAll(dir string) error {
	if s.readOnly {
		return s.readOnlyError("creating " + dir)
	}
	return mkdirLike(s.root, dir)
}

func mkdirLike(root, dir string) error {
	st, err := os.Stat(dir)
	if err == nil {
		if st.IsDir() {
			return nil
		}
		return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirLike(root, parent); err != nil {
			return err
		}
	}
	err = os.Mkdir(dir, DirPerm)
	if errors.Is(err, fs.ErrExist) {
		// Another process made it first: it shares it as this one would.
		if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
			return nil
		}
	}
	if err != nil {
		return err
	}
	return shareLike(root, dir)
}

// shareLike gives dir, which this process just created, the root's mode
// and group. The chown is best effort: a user outside the root's group
// cannot give a directory to it, and store check names the directory then.
func shareLike(root, dir string) error {
	rst, err := os.Stat(root)
	if err != nil {
		return nil // the root itself is being created: nothing to follow
	}
	mode := rst.Mode().Perm() | 0o700 | rst.Mode()&fs.ModeSetgid
	if err := os.Chmod(dir, mode); err != nil {
		return fmt.Errorf("giving store directory %s the store root's mode %v: %w", dir, mode, err)
	}
	if gid, ok := groupOf(rst); ok {
		if dst, err := os.Stat(dir); err == nil {
			if dgid, ok := groupOf(dst); ok && dgid != gid {
				os.Chown(dir, -1, int(gid))
			}
		}
	}
	return nil
}

func groupOf(st fs.FileInfo) (uint32, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return sys.Gid, true
}

func ownerOf(st fs.FileInfo) (uint32, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return sys.Uid, true
}

// shareGroup sets the setgid bit on a store directory this user owns (mkdir
// ignores it in its mode argument on Linux), so that a store made by one
// user keeps its group below it once shared. It is best effort: on a
// directory another user owns chmod fails and changes nothing.
func shareGroup(dir string) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() || st.Mode()&fs.ModeSetgid != 0 {
		return
	}
	os.Chmod(dir, st.Mode().Perm()|fs.ModeSetgid)
}

// ShareProblem is a store directory another member of the store's group
// cannot write into (or whose new subdirectories would leave the group).
type ShareProblem struct {
	Dir   string
	Mode  fs.FileMode
	UID   uint32 // its owner: the user (or root) who can fix it
	GID   uint32
	Issue string // what is wrong: "not group-writable", "group 1000, not the store's 2000", "no setgid bit"
}

// ShareCheck is what CheckShared found.
type ShareCheck struct {
	Root     string
	RootMode fs.FileMode
	GID      uint32 // the root's group: the store's
	// Group says whether the root is a group store (group-writable);
	// otherwise the store is one user's and nothing below is checked.
	Group    bool
	Problems []ShareProblem
}

// CheckShared walks the store's directories and lists those a member of
// the root's group could not write into, the ones in another group and,
// where the root has the setgid bit, the ones without it. It changes
// nothing and creates nothing.
func CheckShared(root string) (*ShareCheck, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w", root, err)
	}
	rst, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w (set --store or ROUTEBENCH_STORE to the store's directory)", abs, err)
	}
	if !rst.IsDir() {
		return nil, fmt.Errorf("artifact store %s is not a directory", abs)
	}
	c := &ShareCheck{Root: abs, RootMode: rst.Mode(), Group: rst.Mode().Perm()&0o020 != 0}
	c.GID, _ = groupOf(rst)
	if !c.Group {
		return c, nil
	}
	setgid := rst.Mode()&fs.ModeSetgid != 0
	err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrPermission) && path != abs {
				// Unreadable to the checker: say so, and go on.
				c.Problems = append(c.Problems, ShareProblem{Dir: path, Issue: "not readable to this user: " + err.Error()})
				return fs.SkipDir
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return nil // gone meanwhile (a finished attempt's dir)
		}
		var issues []string
		if st.Mode().Perm()&0o030 != 0o030 {
			issues = append(issues, "not group-writable")
		}
		if gid, ok := groupOf(st); ok && gid != c.GID {
			issues = append(issues, fmt.Sprintf("group %d, not the store's %d", gid, c.GID))
		}
		if setgid && st.Mode()&fs.ModeSetgid == 0 {
			issues = append(issues, "no setgid bit (new directories below it would leave the store's group)")
		}
		if len(issues) > 0 {
			p := ShareProblem{Dir: path, Mode: st.Mode(), Issue: strings.Join(issues, "; ")}
			p.UID, _ = ownerOf(st)
			p.GID, _ = groupOf(st)
			c.Problems = append(c.Problems, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("checking artifact store %s: %w", abs, err)
	}
	sort.Slice(c.Problems, func(i, j int) bool { return c.Problems[i].Dir < c.Problems[j].Dir })
	return c, nil
}

// Fix is the shell commands that make the store a group store in the
// root's group (or repair one), to be run by the owner of the directories
// named (or root).
func (c *ShareCheck) Fix() string {
	q := shellQuote(c.Root)
	return fmt.Sprintf("chgrp -R %s %s && chmod -R g+rwX %s && find %s -type d -exec chmod g+s {} +", GroupName(c.GID), q, q, q)
}

// GroupName is a group's name, or its number where it has none.
func GroupName(gid uint32) string {
	id := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return g.Name
	}
	return id
}

// UserName is a user's name, or their number where they have none.
func UserName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return u.Username
	}
	return id
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

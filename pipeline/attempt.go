package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"routebench/artifacts"
)

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// attemptName is the name of this attempt's work dir under a key's work
// dir: unique per process, and under Slurm it names the job and its
// restart count, so a leftover dir says which attempt left it.
func (r *Runner) attemptName() string {
	if r.Attempt != "" {
		return r.Attempt
	}
	host := attemptHost()
	if job := os.Getenv("SLURM_JOB_ID"); job != "" {
		restart := os.Getenv("SLURM_RESTART_COUNT")
		if restart == "" {
			restart = "0"
		}
		return unsafeName.ReplaceAllString(fmt.Sprintf("job%s.attempt%s.%s.pid%d", job, restart, host, os.Getpid()), "_")
	}
	return fmt.Sprintf("%s.pid%d.%d", host, os.Getpid(), time.Now().UnixNano())
}

// attemptHost is this host's name as attempt names carry it ("host" when
// the system gives none).
func attemptHost() string {
	host, err := os.Hostname()
	if err != nil {
		host = "host"
	}
	return unsafeName.ReplaceAllString(host, "_")
}

// resumeScratch copies into scratch, for each file name, the newest
// top-level file that an earlier attempt left in its scratch dir under
// work (dot files, the temp files of a write in progress, excluded).
// The dir of the old single-attempt layout, work/scratch, counts as an
// earlier attempt. Checkpoints are written by rename, so the copy reads a
// complete version even while their owner writes the next; a damaged one
// is the stage's to reject, as it rejects its own.
func resumeScratch(work, self, scratch string, logf func(string)) error {
	dirs, _ := filepath.Glob(filepath.Join(work, "*", "scratch"))
	dirs = append(dirs, filepath.Join(work, "scratch"))
	type src struct {
		path string
		mod  time.Time
	}
	newest := map[string]src{}
	for _, d := range dirs {
		if filepath.Dir(d) == self {
			continue
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue
			}
			if o, ok := newest[e.Name()]; !ok || info.ModTime().After(o.mod) {
				newest[e.Name()] = src{filepath.Join(d, e.Name()), info.ModTime()}
			}
		}
	}
	for name, s := range newest {
		if err := copyInto(s.path, filepath.Join(scratch, name)); err != nil {
			return fmt.Errorf("copying %s from an earlier attempt's work dir: %w", s.path, err)
		}
		logf(fmt.Sprintf("scratch file %s taken from the earlier attempt %s", name, filepath.Base(filepath.Dir(filepath.Dir(s.path)))))
	}
	return nil
}

// copyInto copies src to dst through the store's atomic write.
func copyInto(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	_, err = artifacts.CopyFileAtomic(dst, in, fi.Mode().Perm())
	return err
}

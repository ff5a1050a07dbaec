package pipeline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"routebench/artifacts"
)

// Run logs: every Run writes <store>/runs/<start time>-<profile>.jsonl,
// one Record per stage. They are gc's roots beside the built-in profiles'
// live keys (LoadRunRoots), so an artifact a recorded run used, say one of
// a --config run, survives gc until its log expires. For that the log
// names a stage's key before the run reads the store for it: the runner
// rewrites the log (atomically) with a "running" record for the stage as
// soon as its key is known, and with the final record ("hit", "ran",
// "verified", or "failed", which keeps a failed stage's work dir and
// checkpoints) when it is done. gc reads the logs under its exclusive lock,
// which every Put shares, so a stage committed by a run in progress is
// either named by a log gc has read or committed after gc has finished.
const runsDir = "runs"

// runLogTime is the layout of the start time in a run log's name (UTC).
const runLogTime = "20060102T150405.000"

// RunsDir is the directory of a store's run logs.
func RunsDir(storeRoot string) string { return filepath.Join(storeRoot, runsDir) }

// runLog is the log of one Run. Failing to write it is not fatal (the
// results are in the store) but is said once: gc may then remove what the
// run used.
type runLog struct {
	path   string
	warned sync.Once
	warn   func(err error)
}

// newRunLog claims a fresh log name (O_EXCL, so two runs started in the same
// millisecond do not overwrite each other's log) and returns the log.
func (r *Runner) newRunLog(plan *Plan) *runLog {
	l := &runLog{}
	l.warn = func(err error) {
		l.warned.Do(func() {
			fmt.Fprintf(r.logw(), "run log: %v; this run's artifacts are not protected from gc by a run log (check that %s is writable)\n", err, RunsDir(r.Store.Root()))
		})
	}
	dir := RunsDir(r.Store.Root())
	if err := r.Store.MkdirAll(dir); err != nil {
		l.warn(err)
		return l
	}
	base := r.now().UTC().Format(runLogTime) + "-" + plan.Profile
	for n := 1; n < 1000; n++ {
		name := base + ".jsonl"
		if n > 1 {
			name = fmt.Sprintf("%s-%d.jsonl", base, n)
		}
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			l.warn(err)
			return l
		}
		f.Close()
		l.path = f.Name()
		return l
	}
	l.warn(fmt.Errorf("no free log name for %s in %s", base, dir))
	return l
}

// write replaces the log's content with recs: a temp file, fsynced and
// renamed over the log, so a reader sees the old or the new log whole.
func (l *runLog) write(recs []Record) {
	if l.path == "" {
		return
	}
	var b bytes.Buffer
	for _, rec := range recs {
		j, _ := json.Marshal(rec)
		b.Write(j)
		b.WriteByte('\n')
	}
	if err := replaceFile(l.path, b.Bytes()); err != nil {
		l.warn(err)
	}
}

// replaceFile replaces a run log whole. 0644: CreateTemp's 0600 would
// hide the log from the store's other users (gc reads every log; so does
// a `slurm --wait` poll).
func replaceFile(path string, data []byte) error {
	return artifacts.WriteFileAtomic(path, data, 0o644)
}

// RunRoots is what a store's run logs keep alive.
type RunRoots struct {
	Keys    map[artifacts.ActionID]bool // every key named by a log read
	Logs    []string                    // the logs read
	Expired []string                    // logs older than the cutoff, not read
}

// LoadRunRoots reads every run log of the store. A log whose time (the later
// of the start time in its name and its mtime, so that a long run still
// writing counts as recent) is before cutoff is expired instead of read; the
// zero cutoff expires none. A log that cannot be read, or has a line that is
// not a record with a full action key, is an error naming the file and the
// line: gc must not delete what a damaged log may have named, so it refuses
// rather than guessing.
func LoadRunRoots(storeRoot string, cutoff time.Time) (*RunRoots, error) {
	roots := &RunRoots{Keys: map[artifacts.ActionID]bool{}}
	dir := RunsDir(storeRoot)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return roots, nil
	}
	if err != nil {
		return nil, fmt.Errorf("run logs %s: %w (gc keeps what run logs name, so it cannot go on; fix the directory's permissions)", dir, err)
	}
	for _, e := range ents {
		// Temp files of a log being rewritten are skipped: the log they
		// will replace is still there, whole.
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if !cutoff.IsZero() {
			t, err := runLogTimeOf(path)
			if err != nil {
				return nil, err
			}
			if t.Before(cutoff) {
				roots.Expired = append(roots.Expired, path)
				continue
			}
		}
		if err := readRunLog(path, roots.Keys); err != nil {
			return nil, err
		}
		roots.Logs = append(roots.Logs, path)
	}
	sort.Strings(roots.Logs)
	sort.Strings(roots.Expired)
	return roots, nil
}

// runLogTimeOf is the later of the time in a log's name and its mtime; a
// name without a time (a log renamed by hand) counts by its mtime.
func runLogTimeOf(path string) (time.Time, error) {
	st, err := os.Stat(path)
	if err != nil {
		return time.Time{}, fmt.Errorf("run log %s: %w (gc cannot tell its age; delete it or run gc --all)", path, err)
	}
	t := st.ModTime()
	name := filepath.Base(path)
	if len(name) >= len(runLogTime) {
		if nt, err := time.Parse(runLogTime, name[:len(runLogTime)]); err == nil && nt.After(t) {
			t = nt
		}
	}
	return t, nil
}

func readRunLog(path string, keys map[artifacts.ActionID]bool) error {
	fix := "gc keeps every artifact a run log names and will not guess what this one named; fix or delete the file, or run gc with --older-than (if it is old) or --all"
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("run log %s: %w (%s)", path, err, fix)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("run log %s line %d is not a JSON record: %v (%s)", path, n, err, fix)
		}
		id, err := artifacts.ParseActionID(rec.Key)
		if err != nil {
			return fmt.Errorf("run log %s line %d (stage %q): %v (%s)", path, n, rec.Stage, err, fix)
		}
		keys[id] = true
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("run log %s: %w (%s)", path, err, fix)
	}
	return nil
}

package pipeline

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"routebench/artifacts"
)

// A Watch follows a plan's progress in the store for a poller (`slurm
// submit --wait`, which polls every few seconds for hours) without
// verifying, on every poll, what it has verified already: Status hashes
// every cached blob in full, over the network on a cluster's store.
//
// A stage found in the store stays found (gc must not run while jobs run,
// docs/cluster.md). A stage not found yet is looked up, its blobs hashed
// once, only when a run log of the store names its key as done (every job
// rewrites its run log with the stage's final record) or when the poller
// says to look (its job ended: a job whose run log could not be written
// is still seen). Only the run logs that changed since the last poll are
// read, so a poll costs one directory listing of the run logs, a read of
// each log a job rewrote, and Status's key arithmetic, which reads no
// blob.
type Watch struct {
	r    *Runner
	plan *Plan
	done map[string]*artifacts.Artifact
	seen map[string]bool // keys run logs name as done
	logs map[string]logStamp
	// Lookups counts the store lookups (blob verifications) Poll made.
	Lookups int
}

type logStamp struct {
	size  int64
	mtime time.Time
}

// watchBroken breaks one piece of Watch for the mutation check of its
// test ("rehash": every poll looks every stage up again, as Status does).
var watchBroken string

// NewWatch starts watching plan; done is what a Status of it just found
// (its artifacts are not looked up again). The run logs already there are
// noted, not read: what they name was in the store for that Status or is
// read when they change.
func (r *Runner) NewWatch(plan *Plan, done map[string]*artifacts.Artifact) *Watch {
	w := &Watch{r: r, plan: plan, done: map[string]*artifacts.Artifact{}, seen: map[string]bool{}, logs: map[string]logStamp{}}
	for name, a := range done {
		w.done[name] = a
	}
	w.changedLogs()
	return w
}

// Poll says where each stage of the plan is, in plan order, as Status
// does. look(stage) asks for a lookup of a stage no run log has named
// yet (a poller passes the stages whose jobs have ended).
func (w *Watch) Poll(look func(stage string) bool) ([]StatusLine, error) {
	for _, path := range w.changedLogs() {
		w.readLog(path)
	}
	if watchBroken == "rehash" {
		w.done = map[string]*artifacts.Artifact{}
	}
	return w.r.eachStage(w.plan, w.done, func(s *Stage, key Key, line *StatusLine) error {
		switch {
		case w.done[s.Name] != nil:
			line.Cached = true
		case w.seen[line.Key] || watchBroken == "rehash" || (look != nil && look(s.Name)):
			w.Lookups++
			w.r.Store.Revalidate(key.ID)
			art, err := w.r.Store.Get(key.ID)
			switch {
			case err == nil:
				w.done[s.Name] = art
				line.Cached = true
			case artifacts.IsMiss(err):
				line.Reason = err.(*artifacts.Miss).Reason
			default:
				return err
			}
		default:
			line.Reason = "not in the store (no run log names it done)"
		}
		return nil
	})
}

// changedLogs lists the run logs whose size or mtime changed since the
// last call, and notes their new stamps.
func (w *Watch) changedLogs() []string {
	dir := RunsDir(w.r.Store.Root())
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		st := logStamp{info.Size(), info.ModTime()}
		if old, ok := w.logs[e.Name()]; ok && old == st {
			continue
		}
		w.logs[e.Name()] = st
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out
}

// readLog notes the keys a run log names as done (hit, ran, verified).
// A log rewritten while being read is read again at the next poll (its
// stamp changed).
func (w *Watch) readLog(path string) { doneKeys(path, w.seen) }

// Seen says whether a run log read so far names key as done: the store
// had its output once.
func (w *Watch) Seen(key string) bool { return w.seen[key] }

// doneKeys adds to seen the keys the run log at path names as done; a
// line that does not parse is skipped, never trusted.
func doneKeys(path string, seen map[string]bool) {
	f, err := os.Open(path)
	if err != nil {
		// Gone (renamed over), or not readable to this user: the log is
		// a hint only, and a stage whose job has ended is looked up anyway.
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var rec Record
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		switch rec.Result {
		case "hit", "ran", "verified":
			seen[rec.Key] = true
		}
	}
}

// Gone says, by stage, why each stage of lines (a Status of the plan)
// that is not cached is missing although a run log of the store names its
// key done: the store had its output and has it no more (removed,
// collected by gc, damaged). Each is looked up once more after its
// directories are revalidated (NFS), so that only a stage still missing
// then is listed. A stage no run log names is not: it was never in the
// store, or the log of the job that computed it is not visible on this
// host yet (a shared file system's delay, `slurm status`'s done-unseen).
func (r *Runner) Gone(lines []StatusLine) (map[string]string, error) {
	gone := map[string]string{}
	seen := map[string]bool{}
	ents, err := os.ReadDir(RunsDir(r.Store.Root()))
	if err != nil {
		return gone, nil // no run log: nothing was ever recorded done
	}
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") && !strings.HasPrefix(e.Name(), ".") {
			doneKeys(filepath.Join(RunsDir(r.Store.Root()), e.Name()), seen)
		}
	}
	for _, l := range lines {
		if l.Cached || l.Key == "" || !seen[l.Key] {
			continue
		}
		id, err := artifacts.ParseActionID(l.Key)
		if err != nil {
			return nil, err
		}
		r.Store.Revalidate(id)
		_, err = r.Store.Get(id)
		switch {
		case err == nil:
			// Visible after all: not gone (the caller's Status raced a
			// commit, or this host's cache was stale).
		case artifacts.IsMiss(err):
			gone[l.Stage] = err.(*artifacts.Miss).Reason
		default:
			return nil, err
		}
	}
	return gone, nil
}

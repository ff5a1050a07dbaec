package pipeline

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Stream logs: while a stage runs, every progress report it makes (a
// training step with its loss, an evaluation window, ...) is appended as
// one JSON line to <store>/progress/<stage name>.jsonl, so that a long run
// on a GPU machine or a cluster node can be watched (tail -f, or a script
// that reads the lines) from anywhere the store is visible. The file is
// outside every artifact and key; it is appended to across attempts (a
// resumed training run continues its own log after a "start" line) and
// never read back by routebench.
const streamDir = "progress"

// StreamLogPath is where stage's stream log lives in a store.
func StreamLogPath(storeRoot, stage string) string {
	return filepath.Join(storeRoot, streamDir, filepath.FromSlash(stage)+".jsonl")
}

// StreamEvent is one line of a stream log.
type StreamEvent struct {
	Time  string `json:"time"` // RFC 3339, UTC, nanoseconds
	Stage string `json:"stage"`
	Key   string `json:"key"`
	// Event is "start", "progress", "log" (a line the stage logged, in
	// Note), then "done" (its Run returned; the commit follows) or "failed".
	Event string `json:"event"`
	Done  int64  `json:"done,omitempty"`  // progress: units of work done (training: steps)
	Total int64  `json:"total,omitempty"` // progress: of how many
	Note  string `json:"note,omitempty"`  // progress: the stage's own words (training: step, loss, held-out loss, tokens/s)
	// WallSec and Error close an attempt.
	WallSec float64 `json:"wall_seconds,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// streamLog appends events to one stage's stream log. A log that cannot
// be written is said once and then skipped: it never fails the stage.
type streamLog struct {
	mu     sync.Mutex
	f      *os.File
	stage  string
	key    string
	now    func() time.Time
	warned bool
	warn   func(error)
}

func (r *Runner) openStreamLog(s *Stage, key Key) *streamLog {
	l := &streamLog{stage: s.Name, key: key.ID.String(), now: r.now}
	l.warn = func(err error) {
		fmt.Fprintf(r.logw(), "%s: stream log: %v; the stage runs on without it\n", s.Name, err)
	}
	path := StreamLogPath(r.Store.Root(), s.Name)
	// Group-writable as the store's other dirs, whatever the umask: on a
	// shared store another user's job appends here too. (The chmod is
	// best effort: it fails, harmlessly, on another user's log.)
	err := r.Store.MkdirAll(filepath.Dir(path))
	if err == nil {
		l.f, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o664)
	}
	if err == nil {
		l.f.Chmod(0o664)
	}
	if err != nil {
		l.warned = true
		l.warn(err)
	}
	return l
}

func (l *streamLog) write(e StreamEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	e.Time, e.Stage, e.Key = l.now().UTC().Format(time.RFC3339Nano), l.stage, l.key
	b, err := json.Marshal(e)
	if err == nil {
		// One write per line: with O_APPEND a reader never sees half a line
		// from this writer.
		_, err = l.f.Write(append(b, '\n'))
	}
	if err != nil && !l.warned {
		l.warned = true
		l.warn(err)
	}
}

func (l *streamLog) progress(done, total int64, note string) {
	l.write(StreamEvent{Event: "progress", Done: done, Total: total, Note: note})
}

// close ends an attempt with "done" or "failed" and closes the file.
func (l *streamLog) close(wall time.Duration, err error) {
	e := StreamEvent{Event: "done", WallSec: wall.Seconds()}
	if err != nil {
		e.Event, e.Error = "failed", err.Error()
	}
	l.write(e)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

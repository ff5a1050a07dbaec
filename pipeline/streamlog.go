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
// one JSON line to <store>/progress/<stage name>/<key>.jsonl, so that a
// long run on a GPU machine or a cluster node can be watched (tail -f, or
// a script that reads the lines: docs/interop.md) from anywhere the store
// is visible. One file per key: two runs of a stage under different keys
// (another profile, seed or commit) never interleave their lines, and the
// attempts of one key are one file (a resumed training run continues its
// own log after a "start" line; the key's lock lets one attempt run at a
// time). The file is outside every artifact and key and never read back
// by routebench.
const streamDir = "progress"

// StreamLogPath is where the stream log of stage's run under key lives in
// a store.
func StreamLogPath(storeRoot, stage, key string) string {
	if streamLogBroken == "per-stage" {
		return filepath.Join(storeRoot, streamDir, filepath.FromSlash(stage)+".jsonl")
	}
	return filepath.Join(storeRoot, streamDir, filepath.FromSlash(stage), key+".jsonl")
}

// streamLogBroken breaks the layout for the mutation check of its test
// ("per-stage": the old one file per stage, which two keys share).
var streamLogBroken string

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
	Note  string `json:"note,omitempty"`  // progress: the stage's own words, for a person
	// Figures are a measured report's numbers as fields of their own
	// (training steps); nil, and absent from the line, on every other
	// line, and on the lines of logs written before they existed.
	*Figures
	// WallSec and Error close an attempt.
	WallSec float64 `json:"wall_seconds,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// Figures are what a training step measured, for a script to read
// without parsing a note (docs/interop.md). All five are written on every
// step's line; HeldOutLoss is null where the step measured none.
type Figures struct {
	Step         int64    `json:"step"`          // steps done, this one included
	Loss         float64  `json:"loss"`          // this step's training loss, nats a token
	HeldOutLoss  *float64 `json:"held_out_loss"` // held-out loss after this step, nats a token; nil if not measured
	TokensPerSec float64  `json:"tokens_per_s"`  // training tokens / this step's wall time
	ETASec       float64  `json:"eta_s"`         // steps left x the median step time so far
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
	path := StreamLogPath(r.Store.Root(), s.Name, l.key)
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

// progress writes a progress report; f is nil for one without figures.
func (l *streamLog) progress(done, total int64, note string, f *Figures) {
	l.write(StreamEvent{Event: "progress", Done: done, Total: total, Note: note, Figures: f})
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

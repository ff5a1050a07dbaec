package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readStream(t *testing.T, path string) []StreamEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []StreamEvent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e StreamEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// A running stage's progress reports and log lines stream to
// <store>/progress/<stage>.jsonl as they happen, framed by start and
// done (or failed), each under the stage's key; a second attempt appends.
func TestStreamLog(t *testing.T) {
	r := quietRunner(t)
	fail := true
	var seen []StreamEvent // the log as the stage saw it mid-run
	s := &Stage{Name: "train/toy", Kind: "train", Config: "c", Code: []string{"routebench/pipeline"},
		Run: func(rc *RunContext) error {
			for i := int64(1); i <= 3; i++ {
				rc.Progress(i, 3, "step")
			}
			rc.Logf("a %s line", "logged")
			seen = readStream(t, StreamLogPath(r.Store.Root(), "train/toy"))
			if fail {
				return errors.New("boom")
			}
			return os.WriteFile(filepath.Join(rc.OutDir, "w"), []byte("w"), 0o644)
		}}
	p, err := NewPlan("toy", []*Stage{s})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), p); err == nil {
		t.Fatal("the failing stage succeeded")
	}
	if len(seen) != 5 || seen[0].Event != "start" || seen[3].Done != 3 || seen[3].Total != 3 || seen[4].Event != "log" || seen[4].Note != "a logged line" {
		t.Fatalf("mid-run the log held %+v, want start, 3 progress lines and the log line", seen)
	}
	fail = false
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	got := readStream(t, StreamLogPath(r.Store.Root(), "train/toy"))
	var events []string
	for _, e := range got {
		events = append(events, e.Event)
		if e.Stage != "train/toy" || len(e.Key) != 64 || e.Time == "" {
			t.Errorf("event %+v lacks its stage, key or time", e)
		}
	}
	want := "start progress progress progress log failed start progress progress progress log done"
	if strings.Join(events, " ") != want {
		t.Errorf("events %v, want %s", events, want)
	}
	if got[5].Error != "boom" {
		t.Errorf("failed event %+v, want the error", got[5])
	}
}

// A stream log that cannot be written is said and skipped; the stage runs.
func TestStreamLogUnwritable(t *testing.T) {
	r := quietRunner(t)
	if err := os.WriteFile(filepath.Join(r.Store.Root(), streamDir), []byte("a file, not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Stage{Name: "s", Kind: "s", Config: "c", Code: []string{"routebench/pipeline"},
		Run: func(rc *RunContext) error {
			rc.Progress(1, 1, "")
			return os.WriteFile(filepath.Join(rc.OutDir, "w"), []byte("w"), 0o644)
		}}
	p, err := NewPlan("toy", []*Stage{s})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatalf("an unwritable stream log failed the stage: %v", err)
	}
	if log := r.Log.(interface{ String() string }).String(); !strings.Contains(log, "stream log") {
		t.Errorf("the runner's log does not say the stream log failed:\n%s", log)
	}
}

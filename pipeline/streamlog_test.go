package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// streamFile is the one stream log of stage s in r's store, named after
// s's key.
func streamFile(t *testing.T, r *Runner, s *Stage) string {
	t.Helper()
	key, err := ComputeKey(s, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	path := StreamLogPath(r.Store.Root(), s.Name, key.ID.String())
	if got, _ := filepath.Glob(filepath.Join(r.Store.Root(), streamDir, filepath.FromSlash(s.Name), "*")); len(got) != 1 || got[0] != path {
		t.Fatalf("stream logs of %s: %v, want only %s", s.Name, got, path)
	}
	return path
}

// A running stage's progress reports and log lines stream to
// <store>/progress/<stage>/<key>.jsonl as they happen, framed by start and
// done (or failed), each under the stage's key; a second attempt appends.
// A measured report carries its five figures as fields, a plain one none.
func TestStreamLog(t *testing.T) {
	r := quietRunner(t)
	fail := true
	var seen []StreamEvent // the log as the stage saw it mid-run
	held := 4.25
	var s *Stage
	s = &Stage{Name: "train/toy", Kind: "train", Config: "c", Code: []string{"routebench/pipeline"},
		Run: func(rc *RunContext) error {
			for i := int64(1); i <= 2; i++ {
				rc.Progress(i, 3, "step")
			}
			rc.Measured(3, 3, "step 3", Figures{Step: 3, Loss: 4.5, HeldOutLoss: &held, TokensPerSec: 1000, ETASec: 0})
			rc.Logf("a %s line", "logged")
			seen = readStream(t, streamFile(t, r, s))
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
	if f := seen[3].Figures; f == nil || f.Step != 3 || f.Loss != 4.5 || f.HeldOutLoss == nil || *f.HeldOutLoss != held || f.TokensPerSec != 1000 || f.ETASec != 0 {
		t.Errorf("the measured line decodes as %+v, want its figures", seen[3])
	}
	if seen[1].Figures != nil || seen[4].Figures != nil {
		t.Errorf("a plain progress line or a log line has figures: %+v, %+v", seen[1], seen[4])
	}
	fail = false
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	path := streamFile(t, r, s)
	got := readStream(t, path)
	var events []string
	for _, e := range got {
		events = append(events, e.Event)
		if e.Stage != "train/toy" || len(e.Key) != 64 || e.Time == "" || filepath.Base(path) != e.Key+".jsonl" {
			t.Errorf("event %+v lacks its stage, key or time, or is not in its key's file %s", e, path)
		}
	}
	want := "start progress progress progress log failed start progress progress progress log done"
	if strings.Join(events, " ") != want {
		t.Errorf("events %v, want %s", events, want)
	}
	if got[5].Error != "boom" {
		t.Errorf("failed event %+v, want the error", got[5])
	}
	// The line as a script sees it: the five figures on the measured line
	// only, each a number.
	lines := rawLines(t, path)
	for i, l := range lines[:5] {
		for _, f := range []string{"step", "loss", "held_out_loss", "tokens_per_s", "eta_s"} {
			v, ok := l[f]
			if _, num := v.(float64); i == 3 && !num {
				t.Errorf("measured line %v: %s is %v, want a number", l, f, v)
			}
			if i != 3 && ok {
				t.Errorf("line %v has %s, want it on the measured line only", l, f)
			}
		}
	}
}

// rawLines is a stream log's lines as generic JSON, as a script reads them.
func rawLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: line %q: %v", path, line, err)
		}
		out = append(out, m)
	}
	return out
}

// A held-out loss not measured at a step is null, not absent and not 0:
// every step's line has the same five fields.
func TestStreamLogFiguresWithoutHeldOut(t *testing.T) {
	b, err := json.Marshal(StreamEvent{Event: "progress", Done: 2, Total: 9, Figures: &Figures{Step: 2, Loss: 5, TokensPerSec: 10, ETASec: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"step":2,"loss":5,"held_out_loss":null,"tokens_per_s":10,"eta_s":7`) {
		t.Errorf("a step without a held-out loss is written %s", b)
	}
}

// Two runs of one stage under different keys, running at once and
// reporting in turn, write one file each, and neither file holds a line of
// the other run. The control: with the old layout (one file per stage)
// the same runs interleave in one file, and the check says so.
func TestStreamLogOneFilePerKey(t *testing.T) {
	if err := twoKeysOwnLines(t); err != nil {
		t.Fatal(err)
	}
	streamLogBroken = "per-stage"
	defer func() { streamLogBroken = "" }()
	if err := twoKeysOwnLines(t); err == nil {
		t.Fatal("the one-file-per-stage layout passed the check")
	} else {
		t.Logf("control (one file per stage) rejected: %v", err)
	}
}

// twoKeysOwnLines runs two stages named train/toy with different configs
// at once, in two runners sharing a store, their progress reports in
// lockstep (a1 b1 a2 b2 a3 b3), and checks each key's stream log holds its
// own start, three progress lines and done, and nothing else.
func twoKeysOwnLines(t *testing.T) error {
	ra := quietRunner(t)
	rb := &Runner{Store: ra.Store, Log: &bytes.Buffer{}}
	turn := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	other := map[string]string{"a": "b", "b": "a"}
	wait := func(c chan struct{}) error {
		select {
		case <-c:
			return nil
		case <-time.After(30 * time.Second):
			return errors.New("the other run never reported")
		}
	}
	stage := func(cfg string) *Stage {
		return &Stage{Name: "train/toy", Kind: "train", Config: cfg, Code: []string{"routebench/pipeline"},
			Run: func(rc *RunContext) error {
				for i := int64(1); i <= 3; i++ {
					if cfg == "b" {
						if err := wait(turn["a"]); err != nil {
							return err
						}
					}
					rc.Progress(i, 3, "run "+cfg)
					select {
					case turn[cfg] <- struct{}{}:
					case <-time.After(30 * time.Second):
						return errors.New("the other run never took its turn")
					}
					if cfg == "a" {
						if err := wait(turn[other[cfg]]); err != nil {
							return err
						}
					}
				}
				return os.WriteFile(filepath.Join(rc.OutDir, "w"), []byte(cfg), 0o644)
			}}
	}
	keys := map[string]string{}
	errs := make(chan error, 2)
	for cfg, r := range map[string]*Runner{"a": ra, "b": rb} {
		s := stage(cfg)
		k, err := ComputeKey(s, map[string]string{})
		if err != nil {
			t.Fatal(err)
		}
		keys[cfg] = k.ID.String()
		p, err := NewPlan("toy-"+cfg, []*Stage{s})
		if err != nil {
			t.Fatal(err)
		}
		go func() { _, err := r.Run(context.Background(), p); errs <- err }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if keys["a"] == keys["b"] {
		t.Fatal("the two configs share a key")
	}
	for cfg, key := range keys {
		path := StreamLogPath(ra.Store.Root(), "train/toy", key)
		var events []string
		for _, e := range readStream(t, path) {
			if e.Key != key || (e.Event == "progress" && e.Note != "run "+cfg) {
				return fmt.Errorf("%s, the log of run %s (key %.12s), holds a line of key %.12s: %+v", path, cfg, key, e.Key, e)
			}
			events = append(events, e.Event)
		}
		if got := strings.Join(events, " "); got != "start progress progress progress done" {
			return fmt.Errorf("%s, the log of run %s, holds %s, want start, 3 progress lines, done", path, cfg, got)
		}
	}
	return nil
}

// A line written before the figures existed (routebench before issue 54:
// loss and tokens/s only in the note) still reads: no figures, the rest
// as it was.
func TestStreamLogOldLine(t *testing.T) {
	old := `{"time":"2026-12-06T10:00:00.123456789Z","stage":"train/rope","key":"` + strings.Repeat("ab", 32) +
		`","event":"progress","done":20,"total":240,"note":"rope step 20/240 loss 4.1234, held-out 4.2000, 5000 tokens/s, ETA 10s"}`
	var e StreamEvent
	if err := json.Unmarshal([]byte(old), &e); err != nil {
		t.Fatalf("an old line does not decode: %v", err)
	}
	if e.Figures != nil || e.Done != 20 || e.Total != 240 || !strings.Contains(e.Note, "loss 4.1234") {
		t.Errorf("an old line decodes as %+v, want done 20 of 240, its note and no figures", e)
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

package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"routebench/artifacts"
)

func readLog(t *testing.T, path string) []Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var rec Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// The log names a stage's key before the stage runs (so gc keeps what a
// run in progress has committed and will commit), and every stage's final
// record when the run is done.
func TestRunLogNamesKeysBeforeStagesRun(t *testing.T) {
	r := quietRunner(t)
	p := toyPlan(t, toyConfig{N: 3}, map[string]int{})
	var seen []string
	r.OnExecute = func(s *Stage) {
		logs, _ := filepath.Glob(filepath.Join(RunsDir(r.Store.Root()), "*.jsonl"))
		if len(logs) != 1 {
			t.Fatalf("want one run log while %s runs, found %v", s.Name, logs)
		}
		recs := readLog(t, logs[0])
		if last := recs[len(recs)-1]; last.Stage != s.Name || last.Result != "running" || len(last.Key) != 64 {
			t.Fatalf("while %s runs the log ends with %+v", s.Name, last)
		}
		seen = append(seen, s.Name)
	}
	res, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 {
		t.Fatalf("checked the log for %v", seen)
	}
	roots, err := LoadRunRoots(r.Store.Root(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(roots.Logs) != 1 || len(roots.Keys) != 3 {
		t.Fatalf("roots: %d logs, %d keys; want 1 and 3", len(roots.Logs), len(roots.Keys))
	}
	for i, rec := range readLog(t, roots.Logs[0]) {
		id, _ := artifacts.ParseActionID(rec.Key)
		if rec.Key != res.Records[i].Key || len(rec.Outputs) == 0 || rec.Result != "ran" || !roots.Keys[id] {
			t.Fatalf("log record %d is %+v, run record %+v", i, rec, res.Records[i])
		}
	}
}

// Two runs started in the same millisecond keep two logs.
func TestRunLogsDoNotOverwriteEachOther(t *testing.T) {
	r := quietRunner(t)
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	r.Now = func() time.Time { return at }
	for _, n := range []int{1, 2} {
		if _, err := r.Run(context.Background(), toyPlan(t, toyConfig{N: n}, map[string]int{})); err != nil {
			t.Fatal(err)
		}
	}
	roots, err := LoadRunRoots(r.Store.Root(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(roots.Logs) != 2 || len(roots.Keys) != 5 { // "other" is shared
		t.Fatalf("two runs left %v with %d keys", roots.Logs, len(roots.Keys))
	}
}

// A log's age is the later of its name's time and its mtime; a log with
// no time in its name counts by mtime; a temp file is not a log.
func TestRunLogExpiry(t *testing.T) {
	root := t.TempDir()
	dir := RunsDir(root)
	os.MkdirAll(dir, 0o755)
	key := strings.Repeat("ab", 32)
	line := `{"stage":"s","key":"` + key + `","result":"hit"}` + "\n"
	old := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	write := func(name string, mtime time.Time) {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(line), 0o644)
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	write("20240101T000000.000-cpu.jsonl", old)                  // old by both
	write("20240101T000000.000-gpu.jsonl", old.AddDate(0, 0, 9)) // still written to 9 days later
	write("mine.jsonl", old.AddDate(0, 0, 9))
	os.WriteFile(filepath.Join(dir, ".tmp-123.jsonl"), []byte("torn"), 0o644)
	roots, err := LoadRunRoots(root, old.AddDate(0, 0, 5))
	if err != nil {
		t.Fatal(err)
	}
	if len(roots.Expired) != 1 || filepath.Base(roots.Expired[0]) != "20240101T000000.000-cpu.jsonl" || len(roots.Logs) != 2 {
		t.Fatalf("expired %v, read %v", roots.Expired, roots.Logs)
	}
	if id, _ := artifacts.ParseActionID(key); !roots.Keys[id] || len(roots.Keys) != 1 {
		t.Fatalf("keys %v", roots.Keys)
	}
}

// A damaged line is an error naming the file, the line and the fix; it is
// never skipped (gc would then delete what it named).
func TestRunLogDamageIsAnError(t *testing.T) {
	key := strings.Repeat("cd", 32)
	for name, content := range map[string]string{
		"torn line":  `{"stage":"s","key":"` + key + `"}` + "\n" + `{"stage":"t","ke`,
		"short key":  `{"stage":"s","key":"` + key[:12] + `"}` + "\n",
		"not json":   "\x00\x00\x00\n",
		"empty key":  `{"stage":"s"}` + "\n",
		"wrong type": `{"stage":"s","key":7}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			os.MkdirAll(RunsDir(root), 0o755)
			p := filepath.Join(RunsDir(root), "20250101T000000.000-cpu.jsonl")
			os.WriteFile(p, []byte(content), 0o644)
			_, err := LoadRunRoots(root, time.Time{})
			if err == nil || !strings.Contains(err.Error(), p+" line ") || !strings.Contains(err.Error(), "fix or delete the file") {
				t.Fatalf("want an error naming %s, a line and the fix, got %v", p, err)
			}
			// An expired damaged log is not read, so it does not block gc.
			roots, err := LoadRunRoots(root, time.Now())
			if err != nil || len(roots.Expired) != 1 {
				t.Fatalf("expired damaged log: %v %+v", err, roots)
			}
		})
	}
}

// A failed stage's key stays in the log: gc keeps its checkpoints.
func TestRunLogKeepsFailedStage(t *testing.T) {
	r := quietRunner(t)
	s := &Stage{Name: "s", Kind: "s", Config: 1, Code: []string{"routebench/pipeline"},
		Run: func(rc *RunContext) error { return os.ErrDeadlineExceeded }}
	p, _ := NewPlan("t", []*Stage{s})
	if _, err := r.Run(context.Background(), p); err == nil {
		t.Fatal("no error")
	}
	roots, err := LoadRunRoots(r.Store.Root(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	recs := readLog(t, roots.Logs[0])
	if len(recs) != 1 || recs[0].Result != "failed" || len(roots.Keys) != 1 {
		t.Fatalf("log of a failed run: %+v", recs)
	}
}

// A run log stays readable to the store's other users after its rewrites
// (gc and `slurm --wait` of another user read it): the rewrite's temp file
// is not left at CreateTemp's 0600.
func TestRunLogReadableByOthers(t *testing.T) {
	r := quietRunner(t)
	p := toyPlan(t, toyConfig{N: 2}, map[string]int{})
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(RunsDir(r.Store.Root()), "*.jsonl"))
	if len(logs) == 0 {
		t.Fatal("no run log")
	}
	for _, l := range logs {
		st, err := os.Stat(l)
		if err != nil || st.Mode().Perm()&0o044 != 0o044 {
			t.Fatalf("run log %s mode %v (%v): want group- and world-readable", l, st.Mode(), err)
		}
	}
}

package planner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"routebench/artifacts"
	"routebench/modelspec"
	"routebench/pipeline"
)

// progressFigures are the fields a training step's stream-log line must
// carry (docs/interop.md); held_out_loss may be null.
var progressFigures = []string{"step", "loss", "held_out_loss", "tokens_per_s", "eta_s"}

// stepFigures checks that a stream-log line, read as a script reads it,
// carries the five figures as numbers (held_out_loss a number or null) and
// returns them, held_out_loss NaN where null.
func stepFigures(line map[string]any) (map[string]float64, error) {
	out := map[string]float64{}
	for _, f := range progressFigures {
		v, ok := line[f]
		switch x := v.(type) {
		case float64:
			out[f] = x
		case nil:
			if !ok || f != "held_out_loss" {
				return nil, fmt.Errorf("line %v: no number %q", line, f)
			}
			out[f] = math.NaN()
		default:
			return nil, fmt.Errorf("line %v: %q is %v, not a number", line, f, v)
		}
	}
	return out, nil
}

// textCorpus writes a corpus of seeded pseudo-words, enough for the smoke
// profile's training and held-out windows.
func textCorpus(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(54, 5))
	words := strings.Fields("the a of route rope token window held out loss step model path gate far near mass angle")
	for f := range 4 {
		var b strings.Builder
		for b.Len() < 16<<10 {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(9) == 0 {
				b.WriteString(".\n")
			} else {
				b.WriteString(" ")
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.txt", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A smoke training through the pipeline writes one stream log, named after
// its key, whose step lines carry step, loss, held_out_loss, tokens_per_s
// and eta_s as numbers equal to what train.json and speed.json record
// (eta_s recomputed from the step times the tokens/s imply). The reader
// example of docs/interop.md runs on the store and reports that run,
// skipping an old-format file beside it. The control: an old-format line
// fails the figures check.
func TestTrainProgressLog(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model: full mode only")
	}
	const steps = 40
	p, err := LoadProfileWith("smoke", Overrides{Corpus: []string{textCorpus(t)}, Set: []string{"variants=rope", fmt.Sprintf("train.steps=%d", steps)}})
	if err != nil {
		t.Fatal(err)
	}
	full, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := full.Closure("train/rope")
	if err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &pipeline.Runner{Store: store, Log: &bytes.Buffer{}}
	if _, err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	status, arts, err := r.Status(plan)
	if err != nil {
		t.Fatal(err)
	}
	key := ""
	for _, l := range status {
		if l.Stage == "train/rope" {
			key = l.Key
		}
	}
	path := pipeline.StreamLogPath(store.Root(), "train/rope", key)
	if files, _ := filepath.Glob(filepath.Join(store.Root(), "progress", "train", "rope", "*")); key == "" || len(files) != 1 || files[0] != path {
		t.Fatalf("stream logs of train/rope: %v, want only its key's %s", files, path)
	}

	var rep modelspec.TrainReport
	var speed modelspec.SpeedReport
	for name, v := range map[string]any{modelspec.ReportFile: &rep, modelspec.SpeedFile: &speed} {
		b, err := arts["train/rope"].ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	heldOut := map[int]float64{}
	for _, e := range rep.Eval {
		heldOut[e.Step] = e.Loss
	}

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var figs []map[string]float64
	for _, text := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		var line map[string]any
		if err := json.Unmarshal([]byte(text), &line); err != nil {
			t.Fatalf("%s: line %q: %v", path, text, err)
		}
		if line["event"] != "progress" {
			continue
		}
		f, err := stepFigures(line)
		if err != nil {
			t.Fatal(err)
		}
		figs = append(figs, f)
	}
	if len(figs) != steps {
		t.Fatalf("%d step lines, want %d", len(figs), steps)
	}
	tokensPerStep := float64(p.Train.Batch * p.Train.Context)
	var stepTimes, rates []float64 // the timed steps (all but the first), as the trainer's median takes them
	for i, f := range figs {
		step := i + 1
		if f["step"] != float64(step) {
			t.Errorf("line %d: step %v", step, f["step"])
		}
		if f["loss"] != rep.TrainLoss[i] {
			t.Errorf("step %d: loss %v, train.json %v", step, f["loss"], rep.TrainLoss[i])
		}
		want, measured := heldOut[step]
		if got := f["held_out_loss"]; measured != !math.IsNaN(got) || (measured && got != want) {
			t.Errorf("step %d: held_out_loss %v, train.json's eval point %v (measured: %v)", step, got, want, measured)
		}
		dt := tokensPerStep / f["tokens_per_s"]
		if i > 0 {
			stepTimes, rates = append(stepTimes, dt), append(rates, f["tokens_per_s"])
		}
		med := dt
		if len(stepTimes) > 0 {
			s := append([]float64(nil), stepTimes...)
			sort.Float64s(s)
			med = s[len(s)/2]
		}
		if eta := float64(steps-step) * med; math.Abs(f["eta_s"]-eta) > 1e-9*(1+eta) {
			t.Errorf("step %d: eta_s %v, want %d steps x median %v s = %v", step, f["eta_s"], steps-step, med, eta)
		}
	}
	if len(heldOut) != 2 || figs[steps-1]["eta_s"] != 0 {
		t.Errorf("held-out points %v (want 2: eval_every 20 of 40), last eta_s %v (want 0)", heldOut, figs[steps-1]["eta_s"])
	}
	// speed.json's tokens/s is batch x context over the median timed step;
	// the log's per-step rates have it as their median (39 timed steps: an
	// odd count, so the reciprocal's median is the same step).
	sort.Float64s(rates)
	if got := rates[len(rates)/2]; math.Abs(got-speed.TokensPerSec) > 1e-9*speed.TokensPerSec {
		t.Errorf("median tokens_per_s %v, speed.json %v", got, speed.TokensPerSec)
	}

	// The control: a line as logs were written before the figures existed.
	old := map[string]any{"event": "progress", "done": 20.0, "total": 240.0, "note": "rope step 20/240 loss 4.1234, 5000 tokens/s, ETA 10s"}
	if _, err := stepFigures(old); err == nil {
		t.Fatal("an old-format line passed the figures check")
	}

	// The reader example, beside an old-format log of another key (a
	// line being written last, no newline yet) and the old layout's file.
	oldKey := strings.Repeat("ab", 32)
	oldLines := `{"time":"2026-12-06T10:00:00Z","stage":"train/rope","key":"` + oldKey + `","event":"start"}` + "\n" +
		`{"time":"2026-12-06T10:00:01Z","stage":"train/rope","key":"` + oldKey + `","event":"progress","done":20,"total":240,"note":"rope step 20/240 loss 4.1234"}` + "\n" +
		`{"time":"2026-12-06T10:00:02Z","stage":"tr`
	for _, f := range []string{pipeline.StreamLogPath(store.Root(), "train/rope", oldKey), filepath.Join(store.Root(), "progress", "train", "rope.jsonl")} {
		if err := os.WriteFile(f, []byte(oldLines), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := runReaderExample(t, store.Root(), "train/rope")
	want := fmt.Sprintf("%s: step %d, loss %.4f, ", key[:12], steps, rep.TrainLoss[steps-1])
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "ETA 0 s") {
		t.Fatalf("the reader example printed\n%s\nwant one line starting %q with ETA 0 s (nothing for the old-format key)", out, want)
	}
	t.Logf("reader example: %s", strings.TrimSpace(out))
}

// runReaderExample runs the python block of docs/interop.md's progress
// section with /usr/bin/python3 on store's log of stage; it skips where
// pandas is not installed (make torch-packages installs it).
func runReaderExample(t *testing.T, store, stage string) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/interop.md")
	if err != nil {
		t.Fatal(err)
	}
	sec, ok := strings.CutPrefix(string(doc)[max(0, strings.Index(string(doc), "\n## Training progress")):], "\n## Training progress")
	_, code, found := strings.Cut(sec, "```python\n")
	code, _, closed := strings.Cut(code, "```")
	if !ok || !found || !closed {
		t.Fatal("docs/interop.md has no ```python block in a \"## Training progress\" section")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import pandas").Run(); err != nil {
		t.Skipf("/usr/bin/python3 with pandas is needed for docs/interop.md's reader example (make torch-packages): %v", err)
	}
	cmd := exec.Command("/usr/bin/python3", "-", stage)
	cmd.Stdin = strings.NewReader(code)
	cmd.Env = append(os.Environ(), "ROUTEBENCH_STORE="+store)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docs/interop.md's reader example failed: %v\n%s", err, stderr.String())
	}
	return string(out)
}

package planner

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"routebench/artifacts"
	"routebench/internal/corpustest"
	"routebench/internal/procstat"
	"routebench/pipeline"
	"routebench/stages/kernelspeed"
	"routebench/stages/report"
	"routebench/stages/stepspeed"
)

// These tests run real (reduced) smoke plans, so they need the default
// corpus (`make corpus`) and run only in full mode.

const envDrillStore = "ROUTEBENCH_PLAN_DRILL_STORE"

func TestMain(m *testing.M) {
	if store := os.Getenv(envDrillStore); store != "" {
		// Child of the interrupt drill: run the plan until killed.
		if err := runPlan(store, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testProfile is the smoke profile cut to two variants, so a run takes
// seconds; it still has every kind of stage.
func testProfile() Profile {
	p, _ := LoadProfile("smoke", "")
	p.Variants = []string{"rope", "random-qkv"}
	p.LengthMultipliers = []int{1, 2}
	p.Windows = 2
	p.KernelSpeedLengths = []int{64}
	return p
}

func needCorpus(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs training: full mode only")
	}
	if _, err := Build(testProfile()); err != nil {
		corpustest.Missing(t, err)
	}
}

func runPlan(store string, onExec func(*pipeline.Stage)) error {
	plan, err := Build(testProfile())
	if err != nil {
		return err
	}
	s, err := artifacts.Open(store)
	if err != nil {
		return err
	}
	r := &pipeline.Runner{Store: s, Log: &bytes.Buffer{}, OnExecute: onExec}
	_, err = r.Run(context.Background(), plan)
	return err
}

func TestWholeProfileNoOpRerun(t *testing.T) {
	needCorpus(t)
	store := t.TempDir()
	if err := runPlan(store, nil); err != nil {
		t.Fatal(err)
	}
	executed := 0
	cpu0 := procstat.CPUSeconds()
	if err := runPlan(store, func(*pipeline.Stage) { executed++ }); err != nil {
		t.Fatal(err)
	}
	if executed != 0 {
		t.Fatalf("no-op rerun executed %d stages", executed)
	}
	if d := procstat.CPUSeconds() - cpu0; d > 5 {
		t.Fatalf("no-op rerun took %.2f CPU-s (want < 5: CPU time, so that a busy machine cannot fail it)", d)
	}
}

// digests maps stage name -> stable digest of its cached artifact.
func digests(t *testing.T, store string) map[string]string {
	t.Helper()
	plan, err := Build(testProfile())
	if err != nil {
		t.Fatal(err)
	}
	s, err := artifacts.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	r := &pipeline.Runner{Store: s, Log: &bytes.Buffer{}}
	lines, arts, err := r.Status(plan)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range lines {
		if !l.Cached {
			t.Fatalf("stage %s not cached: %s", l.Stage, l.Reason)
		}
		st, _ := plan.Stage(l.Stage)
		out[l.Stage] = pipeline.StableDigest(st, arts[l.Stage])
	}
	return out
}

// TestInterruptDrill SIGKILLs a whole-plan run at random moments, reruns
// it to completion, and requires the same artifacts as a clean run.
func TestInterruptDrill(t *testing.T) {
	needCorpus(t)
	clean := t.TempDir()
	if err := runPlan(clean, nil); err != nil {
		t.Fatal(err)
	}
	want := digests(t, clean)
	store := t.TempDir()
	r := rand.New(rand.NewPCG(5, 5))
	for round := 0; round < 3; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envDrillStore+"="+store)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(500+r.IntN(4000)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		if err := cmd.Wait(); err == nil {
			t.Logf("round %d: the run finished before the kill", round)
		} else if stderr.Len() > 0 && !strings.Contains(err.Error(), "killed") {
			t.Fatalf("round %d: child failed: %v\n%s", round, err, stderr.String())
		}
	}
	if err := runPlan(store, nil); err != nil {
		t.Fatalf("rerun after kills: %v", err)
	}
	got := digests(t, store)
	for name, d := range want {
		if got[name] != d {
			t.Errorf("stage %s: after kills digest %s, clean run %s", name, got[name][:12], d[:12])
		}
	}
	// Leftovers: no work dirs of finished stages remain.
	if ents, _ := os.ReadDir(filepath.Join(store, "work")); len(ents) != 0 {
		t.Errorf("%d work dirs left after a complete run", len(ents))
	}
}

func TestProfilesBuild(t *testing.T) {
	for _, name := range ProfileNames() {
		p, err := LoadProfile(name, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := p.validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	p := testProfile()
	p.LengthMultipliers = []int{1, 3}
	if _, err := Build(p); err == nil || !strings.Contains(err.Error(), "multipliers must be powers of two") {
		t.Fatalf("length 3T accepted or badly reported: %v", err)
	}
}

// TestEvalLengthsKeepShardsAndModels: the evaluation lengths are the
// evaluate stage's business. Changing them must re-key no tokenize stage and
// no train stage (which would retrain every variant), only evaluate/*. The
// train keys are computed with one stand-in digest for the shards, which is
// what they get when the tokenize key, and so its output, is unchanged.
func TestEvalLengthsKeepShardsAndModels(t *testing.T) {
	corpus := tinyCorpus(t)
	for _, profile := range []string{"smoke", "cpu"} {
		keys := make([]map[string]string, 2)
		for i, mults := range [][]int{{1, 2}, {1, 2, 4, 8, 16, 32, 64, 128}} {
			p, err := LoadProfile(profile, "")
			if err != nil {
				t.Fatal(err)
			}
			p.Corpus, p.LengthMultipliers = []string{corpus}, mults
			plan, err := Build(p)
			if err != nil {
				t.Fatal(err)
			}
			keys[i] = map[string]string{}
			for _, s := range plan.Stages {
				if s.Kind != "tokenize" && s.Kind != "train" && s.Kind != "evaluate" {
					continue
				}
				digests := map[string]string{}
				for _, in := range s.Inputs {
					digests[in.Name] = "output of " + in.Stage.Name
				}
				k, err := pipeline.ComputeKey(s, digests)
				if err != nil {
					t.Fatal(err)
				}
				keys[i][s.Name] = k.ID.String()
			}
		}
		evaluated, extended := 0, 0 // extended: evaluate/rope+<method> stages, which train nothing of their own
		for name, k := range keys[0] {
			switch {
			case strings.HasPrefix(name, "evaluate/"):
				evaluated++
				if strings.HasPrefix(name, "evaluate/rope+") {
					extended++
				}
				if keys[1][name] == k {
					t.Errorf("%s: %s has the same key for other evaluation lengths", profile, name)
				}
			case keys[1][name] != k:
				t.Errorf("%s: %s is re-keyed by the evaluation lengths (%.12s -> %.12s)", profile, name, k, keys[1][name])
			}
		}
		if keys[0]["tokenize"] == "" || evaluated == 0 || len(keys[0]) != 1+2*evaluated-extended {
			t.Fatalf("%s: keys of %v, want tokenize and a train and evaluate stage per variant", profile, keys[0])
		}
	}
}

// The report reads the measurement stages' tables by file name without
// importing them (their code would salt its key): the names must agree.
func TestReportReadsProducersFiles(t *testing.T) {
	for _, c := range [][2]string{{report.KernelSpeedMarkdown, kernelspeed.MarkdownFile}, {report.StepSpeedMarkdown, stepspeed.MarkdownFile}} {
		if c[0] != c[1] {
			t.Errorf("the report reads %q, the stage writes %q", c[0], c[1])
		}
	}
}

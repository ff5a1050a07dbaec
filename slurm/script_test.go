package slurm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptRunsNothingFromValues runs a job script whose store path and
// --set value hold spaces, quotes, $(...) and backticks: the command must
// get them verbatim and nothing in them may run.
func TestScriptRunsNothingFromValues(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "INJECTED")
	argsFile := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "fake routebench")
	if err := os.WriteFile(fake, []byte("#!/bin/bash\nprintf '%s\\n' \"$@\" > "+Quote(argsFile)+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	store := dir + "/store $(touch " + marker + ") `touch " + marker + "` it's"
	argv := []string{fake, "run", "train/rope", "--set", "note=$HOME;touch " + marker, "--store", store}
	script := Script(ScriptSpec{Stage: "train/rope", JobName: "rb-x", Dir: dir, Argv: argv, MaxRequeue: 3})
	path := filepath.Join(dir, "job.sbatch")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", path)
	cmd.Env = append(os.Environ(), FailStageEnv+"=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("job script failed: %v\n%s\n%s", err, out, script)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("a value's command substitution ran:\n%s", script)
	}
	got, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(argv[1:], "\n") + "\n"; string(got) != want {
		t.Fatalf("the command got\n%s\nwant\n%s", got, want)
	}
}

// TestScriptFailsOnPurpose: the fault hook fails the named stage only.
func TestScriptFailsOnPurpose(t *testing.T) {
	dir := t.TempDir()
	script := Script(ScriptSpec{Stage: "train/rope", Dir: dir, Argv: []string{"true"}})
	for stage, want := range map[string]int{"train/rope": 3, "train/nope": 0} {
		cmd := exec.Command("bash", "-c", script)
		cmd.Env = append(os.Environ(), FailStageEnv+"="+stage)
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != want {
			t.Fatalf("%s=%s: exit %d, want %d", FailStageEnv, stage, code, want)
		}
	}
}

func TestSiteResources(t *testing.T) {
	two := 2
	site := &Site{Default: Resources{Partition: "cpu", Account: "lab"}, Kinds: map[string]Resources{"train": {Partition: "gpu", Time: "12:00:00"}}, MaxRequeue: &two}
	got := strings.Join(site.For("train", true).Args(), " ")
	want := "--cpus-per-task=2 --mem=4G --time=12:00:00 --partition=gpu --account=lab --gres=gpu:1"
	if got != want {
		t.Fatalf("train resources %q, want %q", got, want)
	}
	if got := strings.Join(site.For("report", false).Args(), " "); got != "--cpus-per-task=1 --mem=2G --time=1:00:00 --partition=cpu --account=lab" {
		t.Fatalf("report resources %q", got)
	}
	if site.maxRequeue() != 2 || (&Site{}).maxRequeue() != 3 {
		t.Fatal("max_requeue: the site's value, else 3")
	}
}

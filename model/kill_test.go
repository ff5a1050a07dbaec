package model

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	killChildEnv   = "ROUTEBENCH_MODEL_KILL_CHILD"
	killTrainerEnv = "ROUTEBENCH_MODEL_KILL_TRAINER"
)

func killDrillConfig(t testing.TB, trainer string) Config {
	c := tinyConfig(t, "random-qkv", 16)
	c.CheckpointEvery = 1 // a write at every step: kills land inside writes too
	c.Trainer = trainer
	return c
}

// TestKillDrill SIGKILLs a training process at random moments (between
// steps, inside checkpoint writes), reruns it each time, and checks the
// final weights equal an uninterrupted run's bit for bit. Full mode only.
func TestKillDrill(t *testing.T) {
	if dir := os.Getenv(killChildEnv); dir != "" {
		// Child: train, announcing every step on stdout.
		err := Train(context.Background(), killDrillConfig(t, os.Getenv(killTrainerEnv)), newSynthData(23), filepath.Join(dir, "work"), filepath.Join(dir, "out"),
			func(p Progress) { fmt.Printf("STEP %d\n", p.Step) })
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if testing.Short() {
		t.Skip("full mode only")
	}
	forEachTrainer(t, testKillDrill)
}

func testKillDrill(t *testing.T, trainer string) {
	c := killDrillConfig(t, trainer)
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref")
	if err := trainOnce(t, c, newSynthData(23), filepath.Join(dir, "refwork"), ref); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	kills := 0
	for round := 0; round < 6; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillDrill$")
		cmd.Env = append(os.Environ(), killChildEnv+"="+dir, killTrainerEnv+"="+trainer)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		target := 1 + rng.IntN(3)
		seen := 0
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "STEP ") {
				seen++
				if seen == target {
					time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
					if cmd.Process.Kill() == nil {
						kills++
					}
					break
				}
			}
		}
		cmd.Wait()
	}
	if kills == 0 {
		t.Fatal("no child was killed")
	}
	if err := trainOnce(t, c, newSynthData(23), filepath.Join(dir, "work"), filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{WeightsFile, ReportFile} {
		want, _ := os.ReadFile(filepath.Join(ref, f))
		got, _ := os.ReadFile(filepath.Join(dir, "out", f))
		if len(want) == 0 || !bytes.Equal(got, want) {
			t.Fatalf("%s after %d kills differs from the uninterrupted run's", f, kills)
		}
	}
	var r SpeedReport
	readJSON(t, filepath.Join(dir, "out", SpeedFile), &r)
	if r.ResumedFrom == 0 {
		t.Fatal("the final run started from scratch: killed runs left no usable checkpoint")
	}
	t.Logf("%d kills, final run resumed at step %d, final weights identical", kills, r.ResumedFrom)
}

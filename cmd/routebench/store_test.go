package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"routebench/artifacts"
)

// The commands that only read the store (plan, status, cat, gate, slurm
// status) create nothing in it: on a fresh group store, one of them run
// under umask 022 must not leave top directories the group cannot write.
// The control: the writing setup, on the same empty store, creates them.
func TestReadOnlyCommandsCreateNothing(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	corpus := docsCorpus(t, dir, 40)
	store := filepath.Join(dir, "store")
	if err := os.Mkdir(store, 0o775); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(store, 0o775|fs.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	args := []string{"--profile", "smoke", "--corpus", corpus, "--store", store}
	var buf bytes.Buffer
	if err := writePlan(&buf, args); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"status", "cat"} {
		c, err := parseCommon(name, args)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.setupReadOnly(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if ents, _ := os.ReadDir(store); len(ents) != 0 {
		t.Fatalf("plan and status created %d entries in the store (%v)", len(ents), ents)
	}
	absent := filepath.Join(dir, "not-yet")
	if err := writePlan(&buf, []string{"--profile", "smoke", "--corpus", corpus, "--store", absent}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(absent); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("plan created the store %s: %v", absent, err)
	}
	c, err := parseCommon("run", args)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.setup(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(store); len(ents) == 0 {
		t.Fatal("control: the writing setup created nothing either")
	}
	check, err := artifacts.CheckShared(store)
	if err != nil {
		t.Fatal(err)
	}
	if err := printStoreCheck(&buf, check); err != nil {
		t.Fatalf("a store made under umask 022 by a writing command: %v\n%s", err, buf.String())
	}
}

// store check names a directory the group cannot write, its owner and the
// fix, and fails; after the fix it passes.
func TestStoreCheckNamesTheDirectoryAndTheFix(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	store := filepath.Join(t.TempDir(), "store")
	if err := os.Mkdir(store, 0o775); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(store, 0o775|fs.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(store, "index")
	if err := os.Mkdir(bad, 0o755); err != nil { // as the store did before: the caller's umask
		t.Fatal(err)
	}
	check, err := artifacts.CheckShared(store)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := printStoreCheck(&out, check); !errors.Is(err, errStoreShared) {
		t.Fatalf("store check with %s not group-writable: %v, want errStoreShared\n%s", bad, err, out.String())
	}
	for _, want := range []string{bad, "not group-writable", "chmod -R g+rwX " + store, "fix, as their owner"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("store check's output does not say %q:\n%s", want, out.String())
		}
	}
	if err := os.Chmod(bad, 0o775|fs.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if check, err = artifacts.CheckShared(store); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := printStoreCheck(&out, check); err != nil {
		t.Fatalf("after the fix: %v\n%s", err, out.String())
	}
}

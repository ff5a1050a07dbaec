package artifacts

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The drills run the store in child processes (this test binary re-executed
// with an environment variable) so that SIGKILL and cross-process sharing
// are real, not simulated.
const (
	envDrillRole  = "ROUTEBENCH_DRILL_ROLE"
	envDrillStore = "ROUTEBENCH_DRILL_STORE"
	envDrillSeed  = "ROUTEBENCH_DRILL_SEED"
)

// drillPayload is self-describing: the first 16 bytes hold the key and the
// length, the rest is a stream seeded by both, so a reader can check the
// bytes it got belong to the key it asked for, beyond the store's own hash.
func drillPayload(key, size int) []byte {
	b := make([]byte, size)
	binary.LittleEndian.PutUint64(b[0:], uint64(key))
	binary.LittleEndian.PutUint64(b[8:], uint64(size))
	r := rand.New(rand.NewPCG(uint64(key), uint64(size)))
	for i := 16; i < size; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

func checkPayload(b []byte, key int) error {
	if len(b) < 16 {
		return fmt.Errorf("payload of %d bytes", len(b))
	}
	k, n := int(binary.LittleEndian.Uint64(b)), int(binary.LittleEndian.Uint64(b[8:]))
	if k != key || n != len(b) {
		return fmt.Errorf("payload says key %d size %d, read key %d size %d", k, n, key, len(b))
	}
	if !bytes.Equal(b, drillPayload(key, n)) {
		return fmt.Errorf("payload for key %d has wrong bytes", key)
	}
	return nil
}

func drillAction(key int) ActionID { return actionFor("drill-" + strconv.Itoa(key)) }

// TestMain dispatches the child roles of the drills.
func TestMain(m *testing.M) {
	switch os.Getenv(envDrillRole) {
	case "writer":
		os.Exit(drillWriter())
	case "mixer":
		os.Exit(drillMixer())
	}
	os.Exit(m.Run())
}

// drillWriter puts artifacts of 1 KB to 64 MB (log-uniform) forever, until killed.
func drillWriter() int {
	s, err := Open(os.Getenv(envDrillStore))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	seed, _ := strconv.ParseUint(os.Getenv(envDrillSeed), 10, 64)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; ; i++ {
		key := r.IntN(12)
		size := int(math.Exp(math.Log(1024) + r.Float64()*(math.Log(64<<20)-math.Log(1024))))
		dir, err := os.MkdirTemp(s.Root(), "drill-out-")
		if err != nil {
			return 2
		}
		os.WriteFile(filepath.Join(dir, "payload"), drillPayload(key, size), 0o644)
		if _, err := s.Put(drillAction(key), "drill", dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		os.RemoveAll(dir)
	}
}

// drillMixer does 100 put/get rounds on overlapping keys and fails on any
// error or inconsistent read.
func drillMixer() int {
	s, err := Open(os.Getenv(envDrillStore))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	seed, _ := strconv.ParseUint(os.Getenv(envDrillSeed), 10, 64)
	r := rand.New(rand.NewPCG(seed, 2))
	for i := 0; i < 100; i++ {
		key := r.IntN(6)
		size := 1024 + 4096*key // one size per key: every put of a key writes the same bytes
		if r.IntN(2) == 0 {
			dir, err := os.MkdirTemp(s.Root(), "drill-out-")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			os.WriteFile(filepath.Join(dir, "payload"), drillPayload(key, size), 0o644)
			if _, err := s.Put(drillAction(key), "drill", dir); err != nil {
				fmt.Fprintln(os.Stderr, "put:", err)
				return 2
			}
			os.RemoveAll(dir)
			continue
		}
		art, err := s.Get(drillAction(key))
		if IsMiss(err) {
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "get:", err)
			return 2
		}
		b, err := art.ReadFile("payload")
		if err == nil {
			err = checkPayload(b, key)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "read:", err)
			return 2
		}
	}
	return 0
}

func drillChild(t *testing.T, role, store string, seed int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envDrillRole+"="+role, envDrillStore+"="+store, envDrillSeed+"="+strconv.Itoa(seed))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t.Cleanup(func() {
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("%s child %d stderr: %s", role, seed, stderr.String())
		}
	})
	return cmd
}

// TestKillDrill SIGKILLs a writer at random moments; after every kill each
// entry that reads as valid must hold exactly the bytes written for it.
func TestKillDrill(t *testing.T) {
	rounds := 200
	if testing.Short() {
		rounds = 20
	}
	store := t.TempDir()
	s, err := Open(store)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(42, 42))
	valid, misses := 0, 0
	for round := 0; round < rounds; round++ {
		cmd := drillChild(t, "writer", store, round)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(r.IntN(400)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		for key := 0; key < 12; key++ {
			art, err := s.Get(drillAction(key))
			if IsMiss(err) {
				misses++
				continue
			}
			if err != nil {
				t.Fatalf("round %d key %d: store error %v", round, key, err)
			}
			b, err := art.ReadFile("payload")
			if err != nil {
				t.Fatalf("round %d key %d: %v", round, key, err)
			}
			if err := checkPayload(b, key); err != nil {
				t.Fatalf("round %d: a valid-looking entry served wrong bytes: %v", round, err)
			}
			valid++
		}
	}
	if valid == 0 {
		t.Fatalf("no artifact survived %d rounds: the drill tested nothing", rounds)
	}
	t.Logf("%d rounds: %d verified reads, %d misses", rounds, valid, misses)
}

// TestConcurrencyDrill runs 8 processes x 100 put/get on overlapping keys.
func TestConcurrencyDrill(t *testing.T) {
	store := t.TempDir()
	if _, err := Open(store); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for p := 0; p < 8; p++ {
		cmd := drillChild(t, "mixer", store, p)
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			errs[p] = cmd.Run()
		}(p)
	}
	wg.Wait()
	for p, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v", p, err)
		}
	}
}

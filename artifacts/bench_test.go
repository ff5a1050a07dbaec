package artifacts_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"routebench/artifacts"
	"routebench/pipeline"
)

// envBench1GB opts in to BenchmarkGet: it writes a 1 GB artifact to
// b.TempDir() and hashes it several times per op, which takes seconds.
const envBench1GB = "ROUTEBENCH_BENCH_1GB"

// BenchmarkGet measures what the runner pays to read a cached 1 GB stage,
// through pipeline.Runner itself so that it measures the runner's lookup
// sequence and not a model of it. The artifact is "data" (1 GB) and "meta"
// (a few bytes). b.SetBytes is the artifact's size, so MB/s is artifact
// bytes served per second: hashing it once per op reads at sha256 speed,
// hashing it twice at half that.
//
//   - hit: the stage is cached; one lookup serves it.
//   - lock-wait: the cached entry is damaged (its "meta" blob is gone) while
//     another process holds the action lock and is recomputing the stage;
//     the runner's first lookup misses, it waits for the lock, the other
//     process commits (repairing "meta"), and the runner's second lookup
//     hits ("computed by another process"). The 1 GB blob never changed.
func BenchmarkGet(b *testing.B) {
	if testing.Short() {
		b.Skip("writes and hashes a 1 GB artifact")
	}
	if os.Getenv(envBench1GB) != "1" {
		b.Skipf("writes and hashes a 1 GB artifact: set %s=1 to run it", envBench1GB)
	}
	const size = 1 << 30
	store, err := artifacts.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var missed chan struct{} // closed at the first miss logged while armed
	store.Logf = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if missed != nil && strings.Contains(format, "never served") {
			close(missed)
			missed = nil
		}
	}
	meta := []byte("meta of the 1 GB stage\n")
	stage := &pipeline.Stage{Name: "big", Kind: "big", Config: size, Code: []string{"routebench/pipeline"},
		Run: func(rc *pipeline.RunContext) error {
			if err := writeRandom(filepath.Join(rc.OutDir, "data"), size); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(rc.OutDir, "meta"), meta, 0o644)
		}}
	plan, err := pipeline.NewPlan("bench", []*pipeline.Stage{stage})
	if err != nil {
		b.Fatal(err)
	}
	r := &pipeline.Runner{Store: store, Log: &bytes.Buffer{}}
	res, err := r.Run(context.Background(), plan)
	if err != nil {
		b.Fatal(err)
	}
	art := res.Artifacts["big"]
	metaBlob, err := art.Path("meta")
	if err != nil {
		b.Fatal(err)
	}
	runHit := func(b *testing.B, reason string) {
		b.Helper()
		res, err := r.Run(context.Background(), plan)
		if err != nil {
			b.Fatal(err)
		}
		if rec := res.Records[0]; rec.Result != "hit" || rec.Reason != reason {
			b.Fatalf("want a hit (%q), got %s (%s)", reason, rec.Result, rec.Reason)
		}
	}

	b.Run("hit", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			runHit(b, "")
		}
	})

	b.Run("lock-wait", func(b *testing.B) {
		b.SetBytes(size)
		repairDir := b.TempDir()
		if err := os.WriteFile(filepath.Join(repairDir, "meta"), meta, 0o644); err != nil {
			b.Fatal(err)
		}
		other := artifacts.ActionID{1} // the repairing Put shares the meta blob
		for b.Loop() {
			b.StopTimer()
			if err := os.Remove(metaBlob); err != nil {
				b.Fatal(err)
			}
			// The "other process": holds the action lock until the runner
			// has missed, then commits and lets go.
			unlock, err := store.ActionLock(art.Action)
			if err != nil {
				b.Fatal(err)
			}
			armed := make(chan struct{})
			mu.Lock()
			missed = armed
			mu.Unlock()
			done := make(chan error, 1)
			go func() {
				<-armed
				_, err := store.Put(other, "repair", repairDir)
				unlock()
				done <- err
			}()
			b.StartTimer()
			runHit(b, "computed by another process")
			b.StopTimer()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}

// writeRandom writes size pseudo-random bytes (not all alike, so the file
// system cannot store them sparse or compressed).
func writeRandom(path string, size int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	buf := make([]byte, 4<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < size; n += len(buf) {
		for i := 0; i < len(buf); i += 8 {
			v := r.Uint64()
			for j := range 8 {
				buf[i+j] = byte(v >> (8 * j))
			}
		}
		if _, err := f.Write(buf[:min(len(buf), size-n)]); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

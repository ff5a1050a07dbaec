package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"routebench/artifacts"
)

// TestWatchReadsRunLogsNotBlobs: a Watch's polls do not verify again what
// the Status it started from found (a blob damaged since goes unnoticed by
// the poll: it was not read), look a stage up once when a run log names
// it done, and look up a stage no log names only when asked to.
func TestWatchReadsRunLogsNotBlobs(t *testing.T) {
	for _, broken := range []string{"", "rehash"} {
		t.Run("broken="+broken, func(t *testing.T) {
			watchBroken = broken
			defer func() { watchBroken = "" }()
			r := quietRunner(t)
			runs := map[string]int{}
			p := toyPlan(t, toyConfig{N: 8}, runs)
			gen, _ := p.Closure("gen")
			if _, err := r.Run(context.Background(), gen); err != nil {
				t.Fatal(err)
			}
			_, done, err := r.Status(p)
			if err != nil {
				t.Fatal(err)
			}
			w := r.NewWatch(p, done)
			cached := func(look func(string) bool) map[string]bool {
				t.Helper()
				lines, err := w.Poll(look)
				if err != nil {
					t.Fatal(err)
				}
				m := map[string]bool{}
				for _, l := range lines {
					m[l.Stage] = l.Cached
				}
				return m
			}
			// Damage gen's blob in place (same size): only a poll that
			// hashes it again notices.
			blob, err := done["gen"].Path("data")
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(blob, 0o644)
			good, _ := os.ReadFile(blob)
			bad := append([]byte(nil), good...)
			bad[0] ^= 1
			if err := os.WriteFile(blob, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			c := cached(nil)
			if broken == "rehash" {
				if c["gen"] || w.Lookups == 0 {
					t.Fatalf("broken watch: gen cached %v after %d lookups; the test cannot tell a re-hashing poll", c["gen"], w.Lookups)
				}
				return
			}
			if !c["gen"] || w.Lookups != 0 {
				t.Fatalf("poll: gen cached %v, %d lookups: want gen cached from the start and no blob read", c["gen"], w.Lookups)
			}
			if err := os.WriteFile(blob, good, 0o444); err != nil {
				t.Fatal(err)
			}
			// A job (another runner on the store) runs double: its run log
			// names the key, and the next poll looks it up, once.
			job := &Runner{Store: r.Store, Log: r.Log}
			if _, err := job.RunOnly(context.Background(), p, "double", OnlyOptions{}); err != nil {
				t.Fatal(err)
			}
			if c := cached(nil); !c["double"] || w.Lookups != 1 {
				t.Fatalf("after double's job: cached %v, %d lookups; want double cached after one lookup", c, w.Lookups)
			}
			if c := cached(nil); !c["double"] || w.Lookups != 1 {
				t.Fatalf("a poll with nothing new made lookups: %d", w.Lookups)
			}
			// other committed without a run log: not seen until asked for.
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "o"), []byte("o"), 0o644)
			lines, _, _ := r.Status(p)
			for _, l := range lines {
				if l.Stage == "other" {
					id, _ := artifacts.ParseActionID(l.Key)
					if _, err := r.Store.Put(id, "other", dir); err != nil {
						t.Fatal(err)
					}
				}
			}
			if c := cached(nil); c["other"] {
				t.Fatal("other seen without a run log or a request to look")
			}
			if c := cached(func(s string) bool { return s == "other" }); !c["other"] {
				t.Fatal("other not found when the poller asked to look")
			}
		})
	}
}

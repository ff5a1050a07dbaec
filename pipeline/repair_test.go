package pipeline

import (
	"context"
	"os"
	"strings"
	"testing"
)

// A run that recomputes a stage because its entry was damaged says it
// repaired it, in both ways a repair commits: a corrupted blob rewritten
// (the old entry then verifies and is kept) and a damaged index entry
// replaced. Neither says another attempt committed first, which is what an
// absent entry that shows up meanwhile is (TestAttemptsNeverShareWorkDirs).
func TestRepairSaysRepair(t *testing.T) {
	for _, damage := range []string{"blob", "entry"} {
		t.Run(damage, func(t *testing.T) {
			r := quietRunner(t)
			runs := map[string]int{}
			plan := toyPlan(t, toyConfig{N: 8}, runs)
			res, err := r.Run(context.Background(), plan)
			if err != nil {
				t.Fatal(err)
			}
			path := indexEntry(t, r, plan, "gen")
			if damage == "blob" {
				if path, err = res.Artifacts["gen"].Path("data"); err != nil {
					t.Fatal(err)
				}
			}
			os.Chmod(path, 0o644)
			if err := os.WriteFile(path, []byte("damaged\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err = r.Run(context.Background(), plan)
			if err != nil {
				t.Fatal(err)
			}
			var rec Record
			for _, x := range res.Records {
				if x.Stage == "gen" {
					rec = x
				}
			}
			if rec.Result != "ran" || !strings.Contains(rec.Reason, "repaired") || strings.Contains(rec.Reason, "another attempt") {
				t.Fatalf("gen after its %s was damaged: %+v, want ran and repaired", damage, rec)
			}
			if runs["gen"] != 2 || runs["double"] != 1 {
				t.Fatalf("runs %v: want gen twice (the repair) and double once (its input's stable output is unchanged)", runs)
			}
			if _, err := r.Store.Get(res.Artifacts["gen"].Action); err != nil {
				t.Fatalf("after the repair: %v", err)
			}
		})
	}
}

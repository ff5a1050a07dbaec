package pipeline

import (
	"context"
	"os"
	"testing"
)

// Gone lists a stage the store had (a run log names its key done) and has
// no more, with the miss's reason; a stage never computed is not listed
// (the control: the same lookup, no run log naming it), nor one cached.
func TestGoneListsWhatTheStoreLost(t *testing.T) {
	r := quietRunner(t)
	runs := map[string]int{}
	plan := toyPlan(t, toyConfig{N: 4}, runs)
	if _, err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	entry := indexEntry(t, r, plan, "other")
	if err := os.Remove(entry); err != nil {
		t.Fatal(err)
	}
	lines, _, err := r.Status(plan)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := r.Gone(lines)
	if err != nil {
		t.Fatal(err)
	}
	if len(gone) != 1 || gone["other"] != "not in the store" {
		t.Fatalf("after removing other's entry: gone %v, want other only, not in the store", gone)
	}
	// Never computed: another configuration of the plan, same store.
	fresh := toyPlan(t, toyConfig{N: 5}, runs)
	lines, _, err = r.Status(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if gone, err = r.Gone(lines); err != nil || len(gone) != 1 || gone["other"] == "" {
		t.Fatalf("a plan whose gen was never computed: gone %v (%v), want other only (its key is the same)", gone, err)
	}
}

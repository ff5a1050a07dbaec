package seeds

import (
	"reflect"
	"testing"
)

// The purposes must be distinct: two streams sharing one would draw the
// same numbers for different things.
func TestPurposesDistinct(t *testing.T) {
	all := []Purpose{TrainBatches, EvalWindows, StratifiedWindows, InitWeights, AngleTable, CopyStrings, CopyControl, CopyText, Theory, Power, StepTimer}
	seen := map[Purpose]bool{}
	for _, p := range all {
		if seen[p] {
			t.Fatalf("purpose %#x is used twice", uint64(p))
		}
		seen[p] = true
	}
	a, b := Stream(1, CopyStrings, 3), Stream(1, CopyControl, 3)
	if a == b {
		t.Fatal("two purposes gave one stream")
	}
	if Stream(1, EvalWindows, 512, 0) == Stream(1, EvalWindows, 1024, 0) || Stream(1, EvalWindows, 512, 0) == Stream(2, EvalWindows, 512, 0) {
		t.Fatal("the length or the seed does not reach the stream")
	}
}

// Pinned values: the corpus split and the shards' batch and window draws
// are those of the hash they had before this package (splitmix's
// HashKeys(seed, id) and HashKeys(stream, seed, keys...)), so moving them
// here re-split no corpus and re-drew no batch. A change to Mix, the
// initial value or the key order fails this.
func TestPinned(t *testing.T) {
	got := []uint64{Split(1, 42), Stream(1, TrainBatches, 7, 3), Stream(21, EvalWindows, 4096, 0), Mix(0)}
	want := []uint64{pinnedSplit, pinnedTrain, pinnedEval, 0xe220a8397b1dcdaf}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#x, want %#x", got, want)
	}
	// A reordered key (the mutation) gives another value.
	if Stream(1, TrainBatches, 3, 7) == pinnedTrain {
		t.Fatal("the keys' order does not matter: the test cannot fail")
	}
}

// Each stream's generator is deterministic and differs across purposes.
func TestRand(t *testing.T) {
	a, b := Rand(5, Theory, 1, 2).Uint64(), Rand(5, Theory, 1, 2).Uint64()
	if a != b {
		t.Fatal("one stream gave two sequences")
	}
	if Rand(5, Power).Uint64() == Rand(5, StepTimer).Uint64() {
		t.Fatal("two purposes gave one sequence")
	}
	if Below(^uint64(0), 10) != 9 || Below(0, 10) != 0 {
		t.Fatal("Below out of range")
	}
}

// Computed with the splitmix package this one replaced (git show
// d7fb7d8:stages/tokenize/internal/splitmix/splitmix.go).
const (
	pinnedSplit = 0x99bf7f0645fa5f07 // splitmix.HashKeys(1, 42)
	pinnedTrain = 0x1ca717889d1ad703 // splitmix.HashKeys(streamTrain, 1, 7, 3)
	pinnedEval  = 0xb4040de7bfe49219 // splitmix.HashKeys(streamEval, 21, 4096, 0)
)

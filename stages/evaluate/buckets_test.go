package evaluate

import "testing"

func TestPositionBuckets(t *testing.T) {
	// Two windows of 10 positions, T = 2: buckets [0,2) [2,4) [4,8) [8,10).
	w := make([]float32, 10)
	for i := range w {
		w[i] = float32(i)
	}
	b := PositionBuckets([][]float32{w, w}, 2)
	want := []Bucket{{0, 2, 0.5}, {2, 4, 2.5}, {4, 8, 5.5}, {8, 10, 8.5}}
	if len(b) != len(want) {
		t.Fatalf("got %v", b)
	}
	for i := range b {
		if b[i] != want[i] {
			t.Fatalf("bucket %d: got %v want %v", i, b[i], want[i])
		}
	}
}

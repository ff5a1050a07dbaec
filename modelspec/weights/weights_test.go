package weights

import (
	"bytes"
	"strings"
	"testing"

	"routebench/modelspec"
)

func testSet(t *testing.T) *Set {
	t.Helper()
	arch := modelspec.Arch{Variant: "rope", Profile: "smoke", Vocab: 3, DModel: 4, Layers: 1, Heads: 2,
		DHidden: 8, Context: 16, NormEps: 1e-5, RopeBase: 10000, Rotation: "rope"}
	s, err := NewSet(arch, []Tensor{
		{Name: "unembed", Shape: []int{4, 3}, Data: []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{Name: "embed", Shape: []int{3, 4}, Data: []float32{-1, 0.5, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1e-30}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRoundTripIsCanonical(t *testing.T) {
	s := testSet(t)
	var a, b bytes.Buffer
	if err := s.Write(&a); err != nil {
		t.Fatal(err)
	}
	got, err := Read(a.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Write(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("re-encoding a decoded set changed its bytes")
	}
	e, err := got.Get("embed", 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	if e[0] != -1 || e[11] != 1e-30 {
		t.Fatalf("embed values changed: %v", e)
	}
	if got.Tensors[0].Name != "embed" {
		t.Fatalf("tensors not sorted by name: %s first", got.Tensors[0].Name)
	}
}

func TestDamagedFilesAreErrors(t *testing.T) {
	s := testSet(t)
	var a bytes.Buffer
	if err := s.Write(&a); err != nil {
		t.Fatal(err)
	}
	full := a.Bytes()
	for _, n := range []int{0, 5, 20, len(full) - 1} {
		if _, err := Read(full[:n]); err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
	}
	if _, err := s.Get("embed", 4, 3); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Errorf("wrong shape not reported: %v", err)
	}
	if _, err := s.Get("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("missing tensor not named: %v", err)
	}
}

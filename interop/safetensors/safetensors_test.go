package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
)

// The bytes the format's specification gives for one tensor: the header
// length, the JSON header padded with spaces to a multiple of 8, then the
// raw little-endian values.
func TestWriteMatchesSpecBytes(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, []Tensor{{Name: "a", Shape: []int{2}, Dtype: F32, F32: []float32{1, -2}}}, nil); err != nil {
		t.Fatal(err)
	}
	hdr := `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	hdr += strings.Repeat(" ", (8-len(hdr)%8)%8)
	want := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	want = append(want, hdr...)
	want = binary.LittleEndian.AppendUint32(want, math.Float32bits(1))
	want = binary.LittleEndian.AppendUint32(want, math.Float32bits(-2))
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("bytes:\n got %q\nwant %q", buf.Bytes(), want)
	}
}

func TestRoundTripAndCanonical(t *testing.T) {
	ts := []Tensor{
		{Name: "z/logprobs", Shape: []int{2, 2}, Dtype: F64, F64: []float64{-1.5, -0.25, math.Inf(-1), 3}},
		{Name: "embed", Shape: []int{3, 2}, Dtype: F32, F32: []float32{1, 2, 3, 4, 5, 6}},
		{Name: "tokens", Shape: []int{3}, Dtype: I32, I32: []int32{0, -7, 50256}},
	}
	meta := map[string]string{"format": "test", "b": "2"}
	var a, b bytes.Buffer
	if err := Write(&a, ts, meta); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(ts) // input order must not matter
	if err := Write(&b, ts, meta); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("the same tensors in another order gave other bytes")
	}
	got, gotMeta, err := Read(a.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if gotMeta["format"] != "test" || gotMeta["b"] != "2" {
		t.Errorf("metadata %v", gotMeta)
	}
	// ts is reversed: tokens, embed, z/logprobs; got is in name order.
	if len(got) != 3 || got[0].Name != "embed" || !slices.Equal(got[0].F32, ts[1].F32) ||
		!slices.Equal(got[1].I32, ts[0].I32) || !slices.Equal(got[2].F64[:2], ts[2].F64[:2]) || !math.IsInf(got[2].F64[2], -1) ||
		!slices.Equal(got[2].Shape, []int{2, 2}) {
		t.Errorf("read back %+v", got)
	}
}

func TestRefusesBadInput(t *testing.T) {
	if err := Write(&bytes.Buffer{}, []Tensor{{Name: "a", Shape: []int{3}, Dtype: F32, F32: []float32{1}}}, nil); err == nil {
		t.Error("a shape that disagrees with the values was written")
	}
	if err := Write(&bytes.Buffer{}, []Tensor{{Name: "a", Shape: []int{1}, Dtype: "BF16"}}, nil); err == nil {
		t.Error("an unsupported dtype was written")
	}
	if err := Write(&bytes.Buffer{}, []Tensor{{Name: "a", Dtype: F32, F32: []float32{1}}, {Name: "a", Dtype: F32, F32: []float32{2}}}, nil); err == nil {
		t.Error("a duplicate name was written")
	}
	var buf bytes.Buffer
	if err := Write(&buf, []Tensor{{Name: "a", Shape: []int{2}, Dtype: F32, F32: []float32{1, 2}}}, nil); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"truncated": buf.Bytes()[:buf.Len()-1],
		"padded":    append(slices.Clone(buf.Bytes()), 0),
		"short":     buf.Bytes()[:4],
	} {
		if _, _, err := Read(data); err == nil {
			t.Errorf("%s file read without error", name)
		}
	}
}

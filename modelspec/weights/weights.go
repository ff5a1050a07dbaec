// Package weights is the canonical, documented on-disk format of a trained
// model: the one artifact the train stage hands to the evaluator.
//
// It exists so that evaluation never depends on gomlx's checkpoint files
// (timestamped, framework-specific) and so that identical weights give
// identical bytes. It must never depend on gomlx itself.
//
// Layout of a weights file (all integers little-endian):
//
//	magic    "RBWEIGHTS\x00v1\n"              (13 bytes)
//	hlen     uint64                             length of the JSON header
//	header   JSON: {"arch": modelspec.Arch, "tensors": [{"name","shape","offset"}...]}
//	padding  zero bytes up to a multiple of 64
//	data     each tensor's float32 values, row-major, 64-byte aligned,
//	         in header order (tensors sorted by name); offsets are relative
//	         to the start of the data section.
//
// Tensor names and the architecture they describe are specified in
// ARCHITECTURE.md beside this file.
package weights

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"

	"routebench/modelspec"
)

const magic = "RBWEIGHTS\x00v1\n"

const align = 64

// Tensor is one named float32 array, row-major.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// Size is the number of elements the shape holds.
func (t Tensor) Size() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Set is a complete weights file in memory.
type Set struct {
	Arch    modelspec.Arch
	Tensors []Tensor // sorted by name
	byName  map[string]int
}

type headerTensor struct {
	Name   string `json:"name"`
	Shape  []int  `json:"shape"`
	Offset int64  `json:"offset"`
}

type header struct {
	Arch    modelspec.Arch `json:"arch"`
	Tensors []headerTensor `json:"tensors"`
}

// NewSet builds a set, sorting tensors by name and checking shapes.
func NewSet(arch modelspec.Arch, tensors []Tensor) (*Set, error) {
	ts := append([]Tensor(nil), tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	s := &Set{Arch: arch, Tensors: ts, byName: make(map[string]int, len(ts))}
	for i, t := range ts {
		if _, dup := s.byName[t.Name]; dup {
			return nil, fmt.Errorf("weights: tensor %q appears twice", t.Name)
		}
		if t.Size() != len(t.Data) {
			return nil, fmt.Errorf("weights: tensor %q has shape %v (%d values) but %d values", t.Name, t.Shape, t.Size(), len(t.Data))
		}
		s.byName[t.Name] = i
	}
	return s, nil
}

// Get returns the tensor with the given name and checks its shape.
func (s *Set) Get(name string, shape ...int) ([]float32, error) {
	i, ok := s.byName[name]
	if !ok {
		return nil, fmt.Errorf("weights: no tensor %q in %s/%s weights", name, s.Arch.Variant, s.Arch.Profile)
	}
	t := s.Tensors[i]
	if len(shape) > 0 && !slices.Equal(t.Shape, shape) {
		return nil, fmt.Errorf("weights: tensor %q has shape %v, want %v", name, t.Shape, shape)
	}
	return t.Data, nil
}

// Write encodes the set canonically: identical sets give identical bytes.
func (s *Set) Write(w io.Writer) error {
	h := header{Arch: s.Arch}
	var off int64
	for _, t := range s.Tensors {
		h.Tensors = append(h.Tensors, headerTensor{Name: t.Name, Shape: t.Shape, Offset: off})
		off += padded(int64(4 * len(t.Data)))
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("weights: encoding header: %w", err)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(magic)
	binary.Write(bw, binary.LittleEndian, uint64(len(hj)))
	bw.Write(hj)
	pre := int64(len(magic) + 8 + len(hj))
	bw.Write(make([]byte, padded(pre)-pre))
	buf := make([]byte, 4)
	for _, t := range s.Tensors {
		for _, v := range t.Data {
			binary.LittleEndian.PutUint32(buf, math.Float32bits(v))
			bw.Write(buf)
		}
		n := int64(4 * len(t.Data))
		bw.Write(make([]byte, padded(n)-n))
	}
	return bw.Flush()
}

func padded(n int64) int64 { return (n + align - 1) / align * align }

// Read decodes a weights file, checking every bound, so that a damaged
// file is an error and never a half-loaded model.
func Read(data []byte) (*Set, error) {
	if len(data) < len(magic)+8 || string(data[:len(magic)]) != magic {
		return nil, errors.New("weights: not a routebench weights file (bad magic)")
	}
	hlen := binary.LittleEndian.Uint64(data[len(magic):])
	pre := int64(len(magic) + 8)
	if hlen > uint64(len(data))-uint64(pre) {
		return nil, fmt.Errorf("weights: header length %d exceeds file size %d", hlen, len(data))
	}
	var h header
	dec := json.NewDecoder(bytes.NewReader(data[pre : pre+int64(hlen)]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("weights: bad header: %w", err)
	}
	if err := h.Arch.Validate(); err != nil {
		return nil, err
	}
	base := padded(pre + int64(hlen))
	var want int64 = base
	for _, ht := range h.Tensors {
		want += padded(int64(4 * Tensor{Shape: ht.Shape}.Size()))
	}
	if want != int64(len(data)) {
		return nil, fmt.Errorf("weights: file is %d bytes, its header describes %d (truncated or padded)", len(data), want)
	}
	tensors := make([]Tensor, 0, len(h.Tensors))
	for _, ht := range h.Tensors {
		t := Tensor{Name: ht.Name, Shape: ht.Shape}
		n := t.Size()
		start := base + ht.Offset
		if n < 0 || ht.Offset < 0 || start+int64(4*n) > int64(len(data)) {
			return nil, fmt.Errorf("weights: tensor %q (shape %v) runs past the end of the file", ht.Name, ht.Shape)
		}
		t.Data = make([]float32, n)
		for i := range t.Data {
			t.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[start+int64(4*i):]))
		}
		tensors = append(tensors, t)
	}
	return NewSet(h.Arch, tensors)
}

// ReadFile reads and decodes a weights file.
func ReadFile(path string) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("weights: %w", err)
	}
	s, err := Read(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

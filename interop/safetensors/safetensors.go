// Package safetensors writes and reads the safetensors format
// (huggingface/safetensors): an 8-byte little-endian header length, a JSON
// header naming each tensor's dtype, shape and byte range, then the raw
// little-endian tensor bytes. It is how routebench's models leave Go
// (routebench export, docs/interop.md): PyTorch, JAX and most tools read it
// without routebench's own weights format (modelspec/weights).
//
// Only the dtypes routebench writes are supported: F32 (weights, log-probs),
// F64 and I32 (token ids). Writing is canonical: tensors in name order,
// the header's keys sorted (encoding/json sorts map keys), padded with
// spaces to a multiple of 8 as the reference writer does, so identical
// inputs give identical bytes.
package safetensors

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
)

// Dtypes as the format spells them.
const (
	F32 = "F32"
	F64 = "F64"
	I32 = "I32"
)

// Tensor is one named array, row-major. Exactly one of F32, F64 or I32
// holds its values, as Dtype says.
type Tensor struct {
	Name  string
	Shape []int
	Dtype string
	F32   []float32
	F64   []float64
	I32   []int32
}

// Size is the number of elements the shape holds.
func (t Tensor) Size() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

func (t Tensor) values() (n, width int, err error) {
	switch t.Dtype {
	case F32:
		n, width = len(t.F32), 4
	case F64:
		n, width = len(t.F64), 8
	case I32:
		n, width = len(t.I32), 4
	default:
		return 0, 0, fmt.Errorf("safetensors: tensor %q has dtype %q; this package writes F32, F64 and I32", t.Name, t.Dtype)
	}
	if n != t.Size() {
		return 0, 0, fmt.Errorf("safetensors: tensor %q has shape %v (%d values) but holds %d values", t.Name, t.Shape, t.Size(), n)
	}
	return n, width, nil
}

type entry struct {
	Dtype   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// metadataKey is the header entry the format reserves for string metadata.
const metadataKey = "__metadata__"

// Write encodes tensors (any order; written in name order) with string
// metadata (may be nil) to w.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	ts := slices.Clone(tensors)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	header := map[string]any{}
	if len(metadata) > 0 {
		header[metadataKey] = metadata
	}
	var off int64
	for i, t := range ts {
		if t.Name == "" || t.Name == metadataKey {
			return fmt.Errorf("safetensors: tensor name %q is reserved or empty; name every tensor", t.Name)
		}
		if i > 0 && ts[i-1].Name == t.Name {
			return fmt.Errorf("safetensors: tensor %q appears twice", t.Name)
		}
		n, width, err := t.values()
		if err != nil {
			return err
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{} // a scalar: [] in the header, never null
		}
		header[t.Name] = entry{Dtype: t.Dtype, Shape: shape, Offsets: [2]int64{off, off + int64(n*width)}}
		off += int64(n * width)
	}
	hj, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("safetensors: encoding the header: %w", err)
	}
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := binary.Write(bw, binary.LittleEndian, uint64(len(hj))); err != nil {
		return fmt.Errorf("safetensors: writing the header length: %w", err)
	}
	bw.Write(hj)
	var buf [8]byte
	for _, t := range ts {
		switch t.Dtype {
		case F32:
			for _, v := range t.F32 {
				binary.LittleEndian.PutUint32(buf[:4], math.Float32bits(v))
				bw.Write(buf[:4])
			}
		case F64:
			for _, v := range t.F64 {
				binary.LittleEndian.PutUint64(buf[:], math.Float64bits(v))
				bw.Write(buf[:])
			}
		case I32:
			for _, v := range t.I32 {
				binary.LittleEndian.PutUint32(buf[:4], uint32(v))
				bw.Write(buf[:4])
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("safetensors: writing the tensors: %w", err)
	}
	return nil
}

// DataSection is the bytes after a safetensors file's header: the tensor
// data, which identify the tensors (names, shapes and dtypes aside)
// whatever the header's metadata says. Its SHA-256 is an export's
// weights digest.
func DataSection(data []byte) ([]byte, error) {
	if len(data) < 8 {
		return nil, errors.New("safetensors: file shorter than its 8-byte header length")
	}
	hlen := binary.LittleEndian.Uint64(data)
	if hlen > uint64(len(data)-8) {
		return nil, fmt.Errorf("safetensors: header length %d exceeds the file's %d bytes", hlen, len(data))
	}
	return data[8+hlen:], nil
}

// Read decodes a safetensors file of F32, F64 and I32 tensors, checking
// every byte range, so that a damaged file is an error and never a
// half-read model. Tensors come back in name order.
func Read(data []byte) ([]Tensor, map[string]string, error) {
	if len(data) < 8 {
		return nil, nil, errors.New("safetensors: file shorter than its 8-byte header length")
	}
	hlen := binary.LittleEndian.Uint64(data)
	if hlen > uint64(len(data)-8) {
		return nil, nil, fmt.Errorf("safetensors: header length %d exceeds the file's %d bytes", hlen, len(data))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+hlen], &raw); err != nil {
		return nil, nil, fmt.Errorf("safetensors: bad header: %w", err)
	}
	body := data[8+hlen:]
	var meta map[string]string
	var ts []Tensor
	var covered int64
	for name, msg := range raw {
		if name == metadataKey {
			if err := json.Unmarshal(msg, &meta); err != nil {
				return nil, nil, fmt.Errorf("safetensors: bad %s: %w", metadataKey, err)
			}
			continue
		}
		var e entry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: bad entry: %w", name, err)
		}
		t := Tensor{Name: name, Shape: e.Shape, Dtype: e.Dtype}
		width := map[string]int64{F32: 4, F64: 8, I32: 4}[e.Dtype]
		if width == 0 {
			return nil, nil, fmt.Errorf("safetensors: tensor %q has dtype %q; this package reads F32, F64 and I32", name, e.Dtype)
		}
		lo, hi := e.Offsets[0], e.Offsets[1]
		if lo < 0 || hi > int64(len(body)) || hi-lo != width*int64(t.Size()) || t.Size() < 0 {
			return nil, nil, fmt.Errorf("safetensors: tensor %q (shape %v, %s) has byte range [%d, %d) in a %d-byte body", name, e.Shape, e.Dtype, lo, hi, len(body))
		}
		covered += hi - lo
		b := body[lo:hi]
		switch e.Dtype {
		case F32:
			t.F32 = make([]float32, t.Size())
			for i := range t.F32 {
				t.F32[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
		case F64:
			t.F64 = make([]float64, t.Size())
			for i := range t.F64 {
				t.F64[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
			}
		case I32:
			t.I32 = make([]int32, t.Size())
			for i := range t.I32 {
				t.I32[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
			}
		}
		ts = append(ts, t)
	}
	if covered != int64(len(body)) {
		return nil, nil, fmt.Errorf("safetensors: the tensors cover %d of the body's %d bytes (overlapping, truncated or padded)", covered, len(body))
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	return ts, meta, nil
}

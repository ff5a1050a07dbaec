package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"routebench/artifacts"
)

// Checkpoint file (workDir/checkpoint-<variant>.rbck, so variants may share
// a work directory), little-endian:
//
//	magic   "RBCKPT\x00v1\n"
//	hlen    uint64, then the JSON header (checkpointHeader)
//	data    float32 values of every parameter, then every first moment,
//	        then every second moment, in header order
//	sum     SHA-256 of all preceding bytes
//
// Written to a temp file in workDir, fsynced, renamed over the old one and
// the directory fsynced, so a kill at any point leaves either the previous
// checkpoint or the new one. Anything wrong on read (short file, bad sum,
// other config) is a miss: training starts over, it never loads half a state.

const (
	checkpointMagic = "RBCKPT\x00v1\n"
)

func checkpointPath(dir string, c Config) string {
	return filepath.Join(dir, "checkpoint-"+c.Variant+".rbck")
}

type checkpointHeader struct {
	Key     string           `json:"key"` // Config.key(): the computation it belongs to
	Step    int              `json:"step"`
	Tensors []checkpointEntr `json:"tensors"`
	History history          `json:"history"`
}

type checkpointEntr struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
}

// history is the part of train.json that must survive a resume.
type history struct {
	TrainLoss []float64   `json:"train_loss"` // per step
	GradNorm  []float64   `json:"grad_norm"`  // per step, before clipping
	Eval      []EvalPoint `json:"eval"`
	// Wall seconds of each step, and of the first step of each process
	// (graph compilation included); for train.json only, never for weights.
	StepTime    []float64 `json:"step_time"`
	CompileTime []float64 `json:"compile_time"`
}

type checkpoint struct {
	header       checkpointHeader
	params, m, v [][]float32
}

func writeCheckpoint(path string, ck *checkpoint) error {
	var buf bytes.Buffer
	buf.WriteString(checkpointMagic)
	hj, err := json.Marshal(ck.header)
	if err != nil {
		return fmt.Errorf("model: encoding checkpoint header: %w", err)
	}
	binary.Write(&buf, binary.LittleEndian, uint64(len(hj)))
	buf.Write(hj)
	b4 := make([]byte, 4)
	for _, list := range [][][]float32{ck.params, ck.m, ck.v} {
		for _, x := range list {
			for _, f := range x {
				binary.LittleEndian.PutUint32(b4, math.Float32bits(f))
				buf.Write(b4)
			}
		}
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	return atomicWrite(path, buf.Bytes())
}

// atomicWrite writes data to path through the store's atomic write (a
// synced temp file renamed into place).
func atomicWrite(path string, data []byte) error {
	if err := artifacts.WriteFileAtomic(path, data, 0o644); err != nil {
		return fmt.Errorf("model: writing checkpoint %s: %w", path, err)
	}
	return nil
}

// readCheckpoint returns the checkpoint in dir for config c, or nil and the
// reason it was not usable (empty when there is none).
func readCheckpoint(dir string, c Config, specs []paramSpec) (*checkpoint, string) {
	path := checkpointPath(dir, c)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ""
	}
	if err != nil {
		return nil, fmt.Sprintf("ignoring checkpoint %s: %v", path, err)
	}
	ck, err := decodeCheckpoint(data, c, specs)
	if err != nil {
		return nil, fmt.Sprintf("ignoring checkpoint %s: %v; starting from step 0", path, err)
	}
	return ck, ""
}

func decodeCheckpoint(data []byte, c Config, specs []paramSpec) (*checkpoint, error) {
	pre := len(checkpointMagic) + 8
	if len(data) < pre+sha256.Size || string(data[:len(checkpointMagic)]) != checkpointMagic {
		return nil, errors.New("not a checkpoint (bad magic or too short)")
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, errors.New("checksum mismatch (truncated or damaged)")
	}
	hlen := binary.LittleEndian.Uint64(data[len(checkpointMagic):])
	if hlen > uint64(len(body)-pre) {
		return nil, errors.New("header length exceeds the file")
	}
	var h checkpointHeader
	if err := json.Unmarshal(body[pre:pre+int(hlen)], &h); err != nil {
		return nil, fmt.Errorf("bad header: %w", err)
	}
	if h.Key != checkpointKey(c) {
		return nil, errors.New("written for a different config")
	}
	if len(h.Tensors) != len(specs) || h.Step < 0 || h.Step > c.Steps || len(h.History.TrainLoss) != h.Step {
		return nil, errors.New("header does not match the model")
	}
	r := bytes.NewReader(body[pre+int(hlen):])
	ck := &checkpoint{header: h}
	for _, dst := range []*[][]float32{&ck.params, &ck.m, &ck.v} {
		for i, s := range specs {
			if h.Tensors[i].Name != s.Name || !slices.Equal(h.Tensors[i].Shape, s.Shape) {
				return nil, fmt.Errorf("tensor %d is %s %v, want %s %v", i, h.Tensors[i].Name, h.Tensors[i].Shape, s.Name, s.Shape)
			}
			x := make([]float32, size(s.Shape))
			if err := binary.Read(r, binary.LittleEndian, x); err != nil {
				return nil, fmt.Errorf("reading %s: %w", s.Name, err)
			}
			*dst = append(*dst, x)
		}
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return nil, errors.New("trailing bytes after the data")
	}
	return ck, nil
}

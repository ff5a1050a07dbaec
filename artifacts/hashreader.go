package artifacts

import (
	"crypto/sha256"
	"hash"
	"io"
)

type hashingReader struct {
	r io.Reader
	h hash.Hash
}

func newHashingReader(r io.Reader) *hashingReader { return &hashingReader{r: r, h: sha256.New()} }

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	return n, err
}

func (h *hashingReader) id() OutputID {
	var o OutputID
	copy(o[:], h.h.Sum(nil))
	return o
}

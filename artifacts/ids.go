package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// FormatVersion is hashed into every action ID; bump it when the store's
// layout or the meaning of an entry changes, so old entries become misses.
const FormatVersion = "routebench-store-v1"

// ActionID identifies a computation: the hash of everything that determines it.
type ActionID [32]byte

// OutputID identifies bytes: their sha256.
type OutputID [32]byte

func (a ActionID) String() string { return hex.EncodeToString(a[:]) }
func (o OutputID) String() string { return hex.EncodeToString(o[:]) }

// Short is the first 12 hex digits, for logs and tables.
func (a ActionID) Short() string { return a.String()[:12] }

// Short is the first 12 hex digits, for logs and tables.
func (o OutputID) Short() string { return o.String()[:12] }

// ParseActionID parses a full 64-digit hex action ID.
func ParseActionID(s string) (ActionID, error) {
	b, ok := parseHash(s)
	if !ok {
		return ActionID{}, fmt.Errorf("artifacts: %q is not a 64-digit hex action ID", s)
	}
	return ActionID(b), nil
}

func parseOutputID(s string) (OutputID, error) {
	b, ok := parseHash(s)
	if !ok {
		return OutputID{}, fmt.Errorf("%q is not a 64-digit hex output ID", s)
	}
	return OutputID(b), nil
}

// parseHash decodes 64 hex digits into a sha256-sized array.
func parseHash(s string) ([32]byte, bool) {
	var h [32]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, false
	}
	copy(h[:], b)
	return h, true
}

// HashFile returns the output ID and size of a file's content.
func HashFile(path string) (OutputID, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return OutputID{}, 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return OutputID{}, 0, err
	}
	var o OutputID
	copy(o[:], h.Sum(nil))
	return o, n, nil
}

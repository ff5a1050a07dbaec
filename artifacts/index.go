package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// An index entry is a small text file:
//
//	routebench-index v1
//	action <hex>
//	stage <name>
//	file <output-id> <size> <name>     (one per file, sorted by name)
//	sum <sha256 of all lines above>
//
// The trailing checksum makes a torn or flipped entry a miss, not a
// misdirected read.
const indexMagic = "routebench-index v1"

func encodeIndex(a *Artifact) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\naction %s\nstage %s\n", indexMagic, a.Action, a.Stage)
	for _, f := range a.Files {
		if f.Name == "" || strings.ContainsAny(f.Name, " \n\r\t") {
			return "", fmt.Errorf("file name %q cannot be stored (no spaces or newlines allowed)", f.Name)
		}
		fmt.Fprintf(&b, "file %s %d %s\n", f.ID, f.Size, f.Name)
	}
	sum := sha256.Sum256([]byte(b.String()))
	fmt.Fprintf(&b, "sum %s\n", hex.EncodeToString(sum[:]))
	return b.String(), nil
}

func decodeIndex(data []byte) (*Artifact, error) {
	text := string(data)
	i := strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n")
	if i < 0 || !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("truncated")
	}
	body, last := text[:i+1], strings.TrimSuffix(text[i+1:], "\n")
	sum := sha256.Sum256([]byte(body))
	if last != "sum "+hex.EncodeToString(sum[:]) {
		return nil, fmt.Errorf("checksum mismatch (torn or edited entry)")
	}
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if len(lines) < 3 || lines[0] != indexMagic {
		return nil, fmt.Errorf("not a %q entry", indexMagic)
	}
	a := &Artifact{}
	act, ok := strings.CutPrefix(lines[1], "action ")
	if !ok {
		return nil, fmt.Errorf("line 2: want action")
	}
	id, err := ParseActionID(act)
	if err != nil {
		return nil, fmt.Errorf("line 2: %w", err)
	}
	a.Action = id
	if a.Stage, ok = strings.CutPrefix(lines[2], "stage "); !ok {
		return nil, fmt.Errorf("line 3: want stage")
	}
	for n, line := range lines[3:] {
		fields := strings.SplitN(line, " ", 4)
		if len(fields) != 4 || fields[0] != "file" {
			return nil, fmt.Errorf("line %d: want file <id> <size> <name>", n+4)
		}
		o, err := parseOutputID(fields[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+4, err)
		}
		size, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil || size < 0 {
			return nil, fmt.Errorf("line %d: bad size %q", n+4, fields[2])
		}
		a.Files = append(a.Files, File{Name: fields[3], ID: o, Size: size})
	}
	return a, nil
}

// Digest identifies an artifact's content as a whole: the hash of its sorted
// (name, output ID) pairs. Downstream action IDs hash this, so a stage
// re-keys exactly when its inputs' bytes change.
func (a *Artifact) Digest() string {
	h := sha256.New()
	for _, f := range a.Files {
		fmt.Fprintf(h, "%s %s\n", f.Name, f.ID)
	}
	return hex.EncodeToString(h.Sum(nil))
}

package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"routebench/artifacts"
)

// Key is a stage's action ID and the text that was hashed to get it.
type Key struct {
	ID   artifacts.ActionID
	Text string // every line that went into the hash (for --debug-key)
}

// CanonicalConfig encodes a config deterministically: encoding/json sorts
// map keys and keeps struct field order; floats use the shortest
// round-trip form.
func CanonicalConfig(cfg any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cfg); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// ComputeKey hashes the store format, the stage name (KeyName if set) and kind, its canonical
// config, the digest of each input (by input name) and the code salt.
// inputDigests maps input name -> artifacts.Artifact digest (volatile files excluded).
func ComputeKey(s *Stage, inputDigests map[string]string) (Key, error) {
	cfg, err := CanonicalConfig(s.Config)
	if err != nil {
		return Key{}, fmt.Errorf("stage %s: config cannot be encoded canonically: %w", s.Name, err)
	}
	salt, saltLines, err := CodeSalt(s.Code)
	if err != nil {
		return Key{}, fmt.Errorf("stage %s: %w", s.Name, err)
	}
	name := s.Name
	if s.KeyName != "" {
		name = s.KeyName
	}
	var lines []string
	lines = append(lines, "format "+artifacts.FormatVersion, "stage "+name, "kind "+s.Kind, "config "+string(cfg))
	names := make([]string, 0, len(s.Inputs))
	for _, in := range s.Inputs {
		names = append(names, in.Name)
	}
	sort.Strings(names)
	for _, n := range names {
		d, ok := inputDigests[n]
		if !ok {
			return Key{}, fmt.Errorf("stage %s: input %q has no digest", s.Name, n)
		}
		lines = append(lines, "input "+n+" "+d)
	}
	lines = append(lines, "code "+salt)
	text := strings.Join(lines, "\n") + "\n"
	sum := sha256.Sum256([]byte(text))
	debug := text
	for _, l := range saltLines {
		debug += "  code: " + l + "\n"
	}
	return Key{ID: artifacts.ActionID(sum), Text: debug}, nil
}

// StableDigest is the digest of an artifact without the stage's volatile
// files: what downstream keys hash.
func StableDigest(s *Stage, a *artifacts.Artifact) string {
	vol := volatileSet(s)
	stable := *a
	stable.Files = nil
	for _, f := range a.Files {
		if !vol[f.Name] {
			stable.Files = append(stable.Files, f)
		}
	}
	return stable.Digest()
}

// volatileSet names the files of a stage's artifact that may differ between
// runs: its declared Volatile files and the runner's RunInfoFile.
func volatileSet(s *Stage) map[string]bool {
	vol := map[string]bool{RunInfoFile: true}
	for _, v := range s.Volatile {
		vol[v] = true
	}
	return vol
}

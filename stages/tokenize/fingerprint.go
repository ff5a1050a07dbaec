package tokenize

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// Fingerprint hashes the content identity of cfg's input files: the source
// description the shards record, then for each file in corpus order its
// location-independent name, size and sha256. Together these are everything
// the corpus paths contribute to the output, so Key hashes this rather than
// the paths: moving the corpus to another directory keeps the fingerprint;
// changing, adding, removing or renaming a file changes it. Files are
// streamed (a few GB/s with SHA-NI), so it suits a 12 MB corpus and a 12 GB
// one alike. It does not cover the rest of Config; Key combines both.
func Fingerprint(cfg Config) (string, error) {
	files, source, err := corpusFiles(cfg)
	if err != nil {
		return "", err
	}
	all := sha256.New()
	fmt.Fprintf(all, "routebench-tokenize-inputs/2 %d %q\n", len(files), source)
	buf := make([]byte, 1<<20)
	for _, f := range files {
		fh, err := os.Open(f.path)
		if err != nil {
			return "", fmt.Errorf("corpus: fingerprint: %w", err)
		}
		h := sha256.New()
		n, err := io.CopyBuffer(h, fh, buf)
		fh.Close()
		if err != nil {
			return "", fmt.Errorf("corpus: fingerprint: reading %s: %w", f.path, err)
		}
		fmt.Fprintf(all, "%q %d %x\n", f.name, n, h.Sum(nil))
	}
	return hex.EncodeToString(all.Sum(nil)), nil
}

package artifacts

import (
	"fmt"
	"os"
	"path/filepath"
)

// OpenExisting opens a store that must already exist, for readers that
// only look artifacts up (export, cat): unlike Open it creates nothing and
// needs no write access, so a read-only store (a shared or archived one,
// a mount without write permission) works, and a mistyped path is an
// error instead of a new empty store. It is OpenReadOnly with that check:
// a write through it fails naming the read-only opening.
func OpenExisting(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: %w", root, err)
	}
	for _, d := range []string{"index", "blobs"} {
		info, err := os.Stat(filepath.Join(abs, d))
		if err == nil && !info.IsDir() {
			err = fmt.Errorf("not a directory")
		}
		if err != nil {
			return nil, fmt.Errorf("no artifact store at %s (its %s/: %w): name an existing store with --store or ROUTEBENCH_STORE, or run the stages first", abs, d, err)
		}
	}
	return OpenReadOnly(abs)
}

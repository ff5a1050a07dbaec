//go:build !linux

package artifacts

import (
	"os"
	"time"
)

// blobStamp: without a known stat layout no blob is ever trusted between
// the Gets of a Lookup; each Get hashes everything (see stamp_linux.go).
type blobStamp struct{}

func stampOf(os.FileInfo) (blobStamp, bool) { return blobStamp{}, false }

func (blobStamp) settled(time.Time) bool { return false }

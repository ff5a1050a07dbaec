//go:build unix

package shards

import (
	"fmt"
	"os"
	"syscall"
)

// mmapFile maps path read-only. Shards are immutable once written, so a
// shared read-only mapping lets the page cache serve all readers (train and
// evaluate processes) from one copy.
func mmapFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return nil, fmt.Errorf("empty file")
	}
	if int64(int(st.Size())) != st.Size() {
		return nil, fmt.Errorf("%d bytes do not fit in memory addresses", st.Size())
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap: %w", err)
	}
	return data, nil
}

func munmap(b []byte) error { return syscall.Munmap(b) }

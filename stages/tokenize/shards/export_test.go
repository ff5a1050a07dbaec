package shards

import "unsafe"

// ViewsOfMappings reports whether every token slice of d points into the
// file mapping of its shard (zero copy), for the external tests.
func ViewsOfMappings(d *Dataset) bool {
	inMap := len(d.shards) > 0
	for _, s := range d.shards {
		lo := uintptr(unsafe.Pointer(&s.data[0]))
		for _, part := range s.parts {
			p := uintptr(unsafe.Pointer(&part.u16[0]))
			if p < lo || p >= lo+uintptr(len(s.data)) {
				inMap = false
			}
		}
	}
	return inMap
}

package tokenize

import (
	"crypto/sha256"
	"encoding/binary"

	"routebench/internal/seeds"
)

// docHash is the seeded hash of a document id that orders documents for the
// held-out split (the first 8 bytes of sha256(id), mixed with the seed): the
// ValFraction rule takes those below the fraction (fractionOf), and the
// top-up to MinHeldOutTokens takes the next ones in ascending order, as if
// the fraction were raised just enough.
func docHash(seed uint64, id string) uint64 {
	sum := sha256.Sum256([]byte(id))
	return seeds.Split(seed, binary.LittleEndian.Uint64(sum[:8]))
}

// fractionOf reads h as a number in [0, 1).
func fractionOf(h uint64) float64 { return float64(h>>11) / (1 << 53) }

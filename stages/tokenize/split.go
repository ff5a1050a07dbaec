package tokenize

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
)

// mix is the splitmix64 finaliser: a fixed, documented bijection, so that
// splits and batches never depend on a library's random number generator.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// hashKeys folds keys into one well-mixed 64-bit value.
func hashKeys(keys ...uint64) uint64 {
	h := uint64(0x726f757465626e63) // "routebnc"
	for _, k := range keys {
		h = mix(h ^ k)
	}
	return h
}

// below returns a value in [0, n) from h (multiply-shift; the bias is at
// most n/2^64).
func below(h, n uint64) uint64 {
	hi, _ := bits.Mul64(h, n)
	return hi
}

// docHash is the seeded hash of a document id that orders documents for the
// held-out split (the first 8 bytes of sha256(id), mixed with the seed): the
// ValFraction rule takes those below the fraction (fractionOf), and the
// top-up to MinHeldOutTokens takes the next ones in ascending order, as if
// the fraction were raised just enough.
func docHash(seed uint64, id string) uint64 {
	sum := sha256.Sum256([]byte(id))
	return hashKeys(seed, binary.LittleEndian.Uint64(sum[:8]))
}

// fractionOf reads h as a number in [0, 1).
func fractionOf(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// Package splitmix is the counter-based hash that both sides of the token
// shards draw from: the writer (stages/tokenize) assigns documents to splits
// with it and the reader (stages/tokenize/shards) draws batch and window
// offsets with it. It lives apart from both so that neither imports the
// other for it; it must never use a library's random number generator, whose
// sequence may change between Go releases and would then re-split a corpus
// or re-draw every evaluation window.
package splitmix

import "math/bits"

// Mix is the splitmix64 finaliser: a fixed, documented bijection.
func Mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// HashKeys folds keys into one well-mixed 64-bit value.
func HashKeys(keys ...uint64) uint64 {
	h := uint64(0x726f757465626e63) // "routebnc"
	for _, k := range keys {
		h = Mix(h ^ k)
	}
	return h
}

// Below returns a value in [0, n) from h (multiply-shift; the bias is at
// most n/2^64).
func Below(h, n uint64) uint64 {
	hi, _ := bits.Mul64(h, n)
	return hi
}

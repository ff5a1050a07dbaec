// Package seeds is the one home of how routebench derives a random stream
// from a run's seed: Stream(seed, purpose, keys...) for a hash and Rand for
// a generator, where the purpose names what the stream is for (initial
// weights, the angle table, training batches, evaluation windows, the copy
// probe's strings, a theory check, ...) and the keys are a length, a step
// or an index. Every stream of the pipeline comes from here, so two draws
// never share random numbers by accident and a reader finds in one file
// what each seed feeds.
//
// It never uses a library's seeding of its own: splitmix64 (Mix) is a
// fixed, documented bijection, and math/rand/v2's PCG, seeded from it, is a
// specified algorithm, so a Go release cannot re-draw a corpus split or an
// evaluation window.
package seeds

import (
	"math/bits"
	"math/rand/v2"
)

// Purpose names what a stream is for; each is a distinct constant (ASCII
// of its name, so a value read in a debugger says what it is).
type Purpose uint64

// The purposes. Values are part of every stage key's meaning: changing
// one re-draws that stream (and the stages that salt this package rerun).
const (
	TrainBatches      Purpose = 0x747261696e       // "train": a training batch's offsets (keys: step, row)
	EvalWindows       Purpose = 0x6576616c         // "eval": an evaluation window's offset (keys: length, window)
	StratifiedWindows Purpose = 0x7374726174       // "strat": stratified long windows (keys: length, window, or a document's hash)
	InitWeights       Purpose = 0x696e6974         // "init": a weight tensor's initial values (key: the hash of its name)
	AngleTable        Purpose = 0x616e676c6573     // "angles": the random-* variants' fixed angle table
	CopyStrings       Purpose = 0x636f7079         // "copy": the copy probe's strings S (key: the probe's index)
	CopyControl       Purpose = 0x6374726c         // "ctrl": the copy probe's control strings R (key: the probe's index)
	CopyText          Purpose = 0x74657874         // "text": where the copy probe's gap text starts
	Theory            Purpose = 0x7468656f7279     // "theory": a theory check's task (keys: check, task)
	Power             Purpose = 0x706f776572       // "power": the claims' power simulation
	StepTimer         Purpose = 0x737465707469     // "stepti": the step timer's random tokens
	initialHash       uint64  = 0x726f757465626e63 // "routebnc"
)

// Mix is the splitmix64 finaliser: a fixed, documented bijection with good
// avalanche, so nearby keys give unrelated values.
func Mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func hashKeys(keys ...uint64) uint64 {
	h := initialHash
	for _, k := range keys {
		h = Mix(h ^ k)
	}
	return h
}

// Stream is the seed of one stream: a well-mixed hash of (purpose, seed,
// keys...).
func Stream(seed uint64, p Purpose, keys ...uint64) uint64 {
	return hashKeys(append([]uint64{uint64(p), seed}, keys...)...)
}

// Rand is a generator for one stream (a PCG seeded from Stream).
func Rand(seed uint64, p Purpose, keys ...uint64) *rand.Rand {
	h := Stream(seed, p, keys...)
	return rand.New(rand.NewPCG(h, Mix(h^0xd1b54a32d192ed03)))
}

// Split is the hash that assigns a document (by the hash of its id) to the
// held-out split: hashKeys(seed, id) without a purpose, the form the
// corpus split has had since the first tokenize stage, kept so that the
// split, and with it every shard, stays byte for byte what it was.
func Split(seed, idHash uint64) uint64 { return hashKeys(seed, idHash) }

// Below returns a value in [0, n) from h (multiply-shift; the bias is at
// most n/2^64).
func Below(h, n uint64) uint64 {
	hi, _ := bits.Mul64(h, n)
	return hi
}

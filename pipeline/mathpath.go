package pipeline

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"runtime"
	"sync"
)

// Go's float64 math.Exp, and Pow and Tanh through it, takes one path on an
// amd64 CPU with AVX2 and FMA (fused multiply-adds, in the standard
// library's assembly) and another without them. The two differ in the last
// bit of about one result in ten, and those bits reach eval.json's
// statistics, the theory checks and the report: on a CPU without FMA (an
// x86-64 older than Haswell, some Pentium and Celeron parts) an evaluation
// computes other bytes than on every AVX2 or AVX-512 host, although
// model/native's kernels, whose bits are the same on every kernel set, do
// not move (make avx2-emulated with QEMU_CPU=max,-avx2,-fma found it).
//
// So such a host gets a term of its own in every stage's key, and its
// results never mix with the FMA hosts' in one store. The term is measured,
// not inferred from CPUID: the fingerprint of the math functions' results on
// a fixed grid, against the one the FMA path gives. It is absent where the
// fingerprint matches, so the keys of FMA hosts are what they were; on
// another architecture the architecture in the same line already keeps
// stores apart, and its math library does not depend on the CPU.

// fmaMathFingerprint is mathFingerprint on an amd64 CPU with AVX2 and FMA
// (Go 1.26; TestMathTermOnThisHost checks it wherever the CPU has both).
const fmaMathFingerprint = "fa238de48ba5c100"

// mathFingerprint hashes math.Exp, Pow, Tanh and Log over a fixed grid.
var mathFingerprint = sync.OnceValue(func() string { return fingerprint(mathGrid()) })

func mathGrid() []float64 {
	var out []float64
	for i := range 1024 {
		x := -40 + 80*float64(i)/1024 + 1e-3*float64(i%7)
		out = append(out, math.Exp(x), math.Pow(1.5+float64(i%13)/7, x/8), math.Tanh(x/16), math.Log(1+float64(i)*0.37))
	}
	return out
}

func fingerprint(vals []float64) string {
	h := sha256.New()
	var b [8]byte
	for _, v := range vals {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// mathTerm is what the key's first line adds on this host: nothing where
// the math functions give the FMA path's results.
func mathTerm() string {
	if runtime.GOARCH != "amd64" {
		return ""
	}
	if fp := mathFingerprint(); fp != fmaMathFingerprint {
		return " math " + fp
	}
	return ""
}

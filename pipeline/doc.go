// Package pipeline plans and runs routebench's stages over the artifact
// store: corpus -> tokenize -> train -> evaluate -> report (and the theory
// and benchmark stages beside them).
//
// A Stage declares its name, its full config, its inputs (other stages) and
// the Go packages whose source determines its output. Its action ID hashes
// all of them, plus its inputs' output digests, so a stage runs again
// exactly when something that can change its output changed, and an
// unchanged stage never runs twice. The package must never let a stage read
// anything but its declared inputs: a stage gets its inputs as verified
// artifacts and writes only into the output directory it is handed.
package pipeline

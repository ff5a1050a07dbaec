package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"routebench/modelspec"
)

// Config is the training configuration; its home (fields, profiles,
// validation) is package modelspec. The alias keeps this package's code short.
type Config = modelspec.Config

// Variant is a registry entry (modelspec.Variant).
type Variant = modelspec.Variant

// Training constants (their home is modelspec: both trainers use them).
const (
	adamBeta1 = modelspec.AdamBeta1
	adamBeta2 = modelspec.AdamBeta2
	adamEps   = modelspec.AdamEps
	// Init: GPT-2 style normal(0, 0.02); residual outputs (wo, w2) scaled by 1/sqrt(2 layers).
	initStd = 0.02
)

// checkpointKey identifies the computation a checkpoint belongs to: every
// field that changes the weights (not CheckpointEvery, which only changes
// when they are saved).
func checkpointKey(c Config) string {
	c.CheckpointEvery = 0
	b, _ := json.Marshal(c)
	h := sha256.Sum256(append([]byte("routebench/model checkpoint v1\n"), b...))
	return hex.EncodeToString(h[:])
}

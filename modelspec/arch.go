package modelspec

import "fmt"

// Arch describes the network a weights file (package spec/weights) belongs
// to, as spec/weights/ARCHITECTURE.md specifies it. Every field that
// changes the forward pass is here, so a file is self-describing.
type Arch struct {
	Variant   string  `json:"variant"`    // registry name: nope, rope, alibi, random-qk, ...
	Profile   string  `json:"profile"`    // smoke, cpu, paper
	Vocab     int     `json:"vocab"`      // number of token ids (incl. end-of-document)
	DModel    int     `json:"d_model"`    // residual width
	Layers    int     `json:"layers"`     // transformer blocks
	Heads     int     `json:"heads"`      // attention heads; d_head = DModel/Heads
	DHidden   int     `json:"d_hidden"`   // MLP hidden width
	Context   int     `json:"context"`    // training context T
	NormEps   float64 `json:"norm_eps"`   // RMSNorm epsilon
	RopeBase  float64 `json:"rope_base"`  // RoPE theta base (10000)
	Rotation  string  `json:"rotation"`   // "none", "rope", "accumulated"
	ValueRot  bool    `json:"value_rot"`  // value transport (the *-qkv variants)
	ALiBi     bool    `json:"alibi"`      // ALiBi distance bias
	AngleNote string  `json:"angle_note"` // how the angle table was drawn (documentation only)
	// KerpleLog: KERPLE's trained log distance bias (modelspec/kerple.go),
	// tensors kerple_p and kerple_a per block.
	KerpleLog bool `json:"kerple_log,omitempty"`
	// AngleProj: accumulated angles projected per block from its normed
	// input (modelspec/angleproj.go) instead of an angle table.
	AngleProj bool `json:"angle_proj,omitempty"`
	// PaTH (modelspec/householder.go); absent from the files of other variants.
	Householder bool `json:"householder,omitempty"` // Householder transport of the keys
	ForgetGate  bool `json:"forget_gate,omitempty"` // FoX gate (needs Householder)
	PathRank    int  `json:"path_rank,omitempty"`   // rank of the w projection
	PathConv    int  `json:"path_conv,omitempty"`   // short-convolution kernel
}

// HasAngleTable reports whether weights of this arch hold an angle table.
func (a Arch) HasAngleTable() bool { return a.Rotation == RotationAccumulated && !a.AngleProj }

// DHead is the per-head width.
func (a Arch) DHead() int { return a.DModel / a.Heads }

// Validate checks the internal consistency of an architecture.
func (a Arch) Validate() error {
	switch {
	case a.Vocab <= 0 || a.DModel <= 0 || a.Layers <= 0 || a.Heads <= 0 || a.DHidden <= 0 || a.Context <= 0:
		return fmt.Errorf("modelspec: arch %+v has a non-positive size", a)
	case a.DModel%a.Heads != 0:
		return fmt.Errorf("modelspec: d_model %d is not a multiple of heads %d", a.DModel, a.Heads)
	case a.DHead()%2 != 0:
		return fmt.Errorf("modelspec: d_head %d is odd; rotations need 2-D pairs", a.DHead())
	}
	switch a.Rotation {
	case RotationNone, RotationRoPE, RotationAccumulated:
	default:
		return fmt.Errorf("modelspec: unknown rotation %q (want none, rope or accumulated)", a.Rotation)
	}
	if a.ValueRot && a.Rotation != RotationAccumulated {
		return fmt.Errorf("modelspec: value rotation needs accumulated rotation, got %q", a.Rotation)
	}
	if a.AngleProj && a.Rotation != RotationAccumulated {
		return fmt.Errorf("modelspec: arch %s: angle_proj needs accumulated rotation, got %q", a.Variant, a.Rotation)
	}
	switch {
	case a.ForgetGate && !a.Householder:
		return fmt.Errorf("modelspec: arch %s: the forgetting gate is implemented with the Householder transport only (set householder)", a.Variant)
	case a.Householder && (a.Rotation != RotationNone || a.ALiBi):
		return fmt.Errorf("modelspec: arch %s: the Householder transport does not combine with rotation %q or ALiBi (no implementation does)", a.Variant, a.Rotation)
	case a.KerpleLog && (a.ALiBi || a.Householder):
		return fmt.Errorf("modelspec: arch %s: the KERPLE bias does not combine with ALiBi or the Householder transport (no implementation does)", a.Variant)
	case a.Householder && (a.PathRank <= 0 || a.PathConv <= 0):
		return fmt.Errorf("modelspec: arch %s: path_rank %d and path_conv %d must be positive with the Householder transport", a.Variant, a.PathRank, a.PathConv)
	}
	return nil
}

package nativetrain

// Mutation checks: the agreement tests (model/native_agree_test.go) must
// fail when one piece of the backward pass is wrong. BreakForTest breaks a
// named piece until the returned function restores it. The checks cost one
// comparison per pass, never per element.

var broken string

// Mutation is a piece BreakForTest can break and a variant whose gradient
// goes through it.
type Mutation struct{ Piece, Variant string }

var mutations = []Mutation{
	{"gelu", "learned-qkv"}, {"softmax", "learned-qkv"}, {"rmsnorm", "learned-qkv"},
	{"rotation", "learned-qkv"}, {"angles", "learned-qkv"}, {"embed", "learned-qkv"},
	// PaTH (householder_steps.go, householder_attention.go): the keys' gradient through the
	// transport's R, the strengths', the short convolution's taps, FoX's gate.
	{"householder", "path"}, {"beta", "path"}, {"conv", "path"}, {"gate", "path-fox"},
	// learned-proj-qkv (angleproj.go): the angles' gradient taken per
	// position (dtheta_s = dpsi_s) instead of the suffix sum over the route.
	{"angleproj", "learned-proj-qkv"},
}

// Mutations lists the pieces BreakForTest can break.
func Mutations() []Mutation { return append([]Mutation(nil), mutations...) }

// BreakForTest makes the named piece of the backward pass wrong (for tests
// only; not safe for concurrent trainers) and returns the function that
// repairs it.
func BreakForTest(piece string) (restore func()) {
	was := broken
	broken = piece
	return func() { broken = was }
}

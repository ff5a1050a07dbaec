package nativetrain

// Mutation checks: the agreement tests (model/native_agree_test.go) must
// fail when one piece of the backward pass is wrong. BreakForTest breaks a
// named piece until the returned function restores it. The checks cost one
// comparison per pass, never per element.

var broken string

var mutations = []string{"gelu", "softmax", "rmsnorm", "rotation", "angles", "embed"}

// Mutations lists the pieces BreakForTest can break.
func Mutations() []string { return append([]string(nil), mutations...) }

// BreakForTest makes the named piece of the backward pass wrong (for tests
// only; not safe for concurrent trainers) and returns the function that
// repairs it.
func BreakForTest(piece string) (restore func()) {
	was := broken
	broken = piece
	return func() { broken = was }
}

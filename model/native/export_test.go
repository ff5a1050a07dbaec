package native

// Internals for the external tests (package native_test: gomlx_test.go and
// xla_eval_test.go import the gomlx model, which links the native trainer,
// which imports this package, so they cannot be internal tests).
var (
	Variants    = variants
	VariantArch = variantArch
)

const TolLogit = tolLogit

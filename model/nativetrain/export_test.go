package nativetrain

// Internals for the external tests (package nativetrain_test: the
// benchmarks import package model for FlopsPerStep, and model imports this
// package, so they cannot be internal tests).
var (
	NewTestTrainer = newTestTrainer
	TestBatch      = testBatch
	TestConfig     = testConfig
)

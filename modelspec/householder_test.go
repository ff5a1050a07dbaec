package modelspec

import (
	"slices"
	"strings"
	"testing"
)

// PaTH entries are in the registry's default set, and carry
// their parts into Arch; both trainers take them.
func TestPathVariants(t *testing.T) {
	for _, tc := range []struct {
		name string
		gate bool
	}{{"path", false}, {"path-fox", true}} {
		v, err := LookupVariant(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if !v.Householder || v.ForgetGate != tc.gate || v.OptIn || !v.NativeTrainer() || v.Rotation != RotationNone || v.Doc == "" {
			t.Errorf("%s: parts %+v", tc.name, v)
		}
		if !slices.Contains(DefaultVariants(), tc.name) {
			t.Errorf("%s: not in the default set %v", tc.name, DefaultVariants())
		}
		c := Config{Variant: tc.name, Profile: "test", Vocab: 257, DModel: 32, Layers: 2, Heads: 2, DHidden: 128,
			Context: 32, Batch: 8, Steps: 60, Warmup: 6, LR: 3e-3, MinLR: 1e-4, Clip: 1, Seed: 1, Trainer: TrainerGomlx}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		a := c.Arch()
		if err := a.Validate(); err != nil || !a.Householder || a.ForgetGate != tc.gate || a.PathRank != PathRank || a.PathConv != PathConv {
			t.Errorf("%s: arch %+v (%v)", tc.name, a, err)
		}
		c.Trainer = TrainerNative
		if err := c.Validate(); err != nil {
			t.Errorf("%s with the native trainer: %v", tc.name, err)
		}
	}
	bad := (Config{Variant: "nope", Vocab: 3, DModel: 4, Layers: 1, Heads: 2, DHidden: 4, Context: 2}).Arch()
	bad.ForgetGate = true
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "householder") {
		t.Errorf("a gate without the transport: %v", err)
	}
	// The cpu profile's shape: 9,092 parameters per block (18,184 for 2 blocks), 516 more with the gate.
	if got := PathParams(128, 4, false); got != 9092 {
		t.Errorf("PathParams(128, 4) = %d, want 9092", got)
	}
	if got := PathParams(128, 4, true) - PathParams(128, 4, false); got != 516 {
		t.Errorf("the gate adds %d, want 516", got)
	}
}

// A variant with a part the native trainer lacks (none in the registry
// today) is refused with trainer native, with an error that names the fix.
func TestGomlxOnlyRefusesNative(t *testing.T) {
	defer func(r []Variant) { registry = r }(registry)
	registry = append(registry[:len(registry):len(registry)], Variant{Name: "test-gomlx-only", Rotation: RotationNone, OptIn: true, GomlxOnly: true})
	for _, name := range Variants() {
		v, _ := LookupVariant(name)
		if v.NativeTrainer() != (name != "test-gomlx-only") {
			t.Errorf("%s: NativeTrainer() = %v", name, v.NativeTrainer())
		}
	}
	c := Config{Variant: "test-gomlx-only", Profile: "test", Vocab: 257, DModel: 32, Layers: 2, Heads: 2, DHidden: 128,
		Context: 32, Batch: 8, Steps: 60, Warmup: 6, LR: 3e-3, MinLR: 1e-4, Clip: 1, Seed: 1, Trainer: TrainerGomlx}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.Trainer = TrainerNative
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "gomlx") {
		t.Errorf("trainer native: want an error naming gomlx, got %v", err)
	}
}

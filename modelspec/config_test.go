package modelspec

import (
	"reflect"
	"strings"
	"testing"
)

func TestVariantsRegistryOrder(t *testing.T) {
	want := "nope rope alibi kerple-log random-qk random-qkv random-qkv-alibi learned-qk learned-qkv learned-proj-qkv"
	if got := strings.Join(DefaultVariants(), " "); got != want+" path path-fox" {
		t.Fatalf("DefaultVariants() = %q, want %q", got, want+" path path-fox")
	}
	if got, all := strings.Join(Variants(), " "), want+" learned-qk-randinit learned-qkv-randinit path path-fox"; got != all {
		t.Fatalf("Variants() = %q, want %q", got, all)
	}
	if _, err := LookupVariant("pope"); err == nil || !strings.Contains(err.Error(), "pope") {
		t.Fatalf("unknown variant error %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	c := Config{Variant: "random-qk", Profile: "test", Vocab: 257, DModel: 32, Layers: 2, Heads: 2, DHidden: 128,
		Context: 32, Batch: 8, Steps: 60, Warmup: 6, LR: 3e-3, MinLR: 1e-4, Clip: 1, SigmaMax: 1, SigmaMin: 0.35, Seed: 1}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := c.Arch().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.SigmaMin = 2 }, ParamSigmaMin},
		{func(c *Config) { c.Heads = 3 }, ParamDModel},
		{func(c *Config) { c.Warmup = 61 }, ParamWarmup},
		{func(c *Config) { c.Variant = "pope" }, "pope"},
	} {
		bad := c
		tc.edit(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error naming %s, got %v", tc.want, err)
		}
	}
}

// The registry is a composition of parts: each name's parts are what
// scripts and both implementations rely on.
func TestVariantParts(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		rotation                 string
		valueRot, alibi, learned bool
	}{
		{"nope", RotationNone, false, false, false},
		{"rope", RotationRoPE, false, false, false},
		{"alibi", RotationNone, false, true, false},
		{"random-qk", RotationAccumulated, false, false, false},
		{"random-qkv", RotationAccumulated, true, false, false},
		{"learned-qk", RotationAccumulated, false, false, true},
		{"learned-qkv", RotationAccumulated, true, false, true},
		{"random-qkv-alibi", RotationAccumulated, true, true, false},
		{"learned-qk-randinit", RotationAccumulated, false, false, true},
		{"learned-qkv-randinit", RotationAccumulated, true, false, true},
	} {
		v, err := LookupVariant(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if v.Rotation != tc.rotation || v.ValueRot != tc.valueRot || v.ALiBi != tc.alibi || v.Learned != tc.learned {
			t.Errorf("%s: parts %+v, want rotation %s value_rot %v alibi %v learned %v", tc.name, v, tc.rotation, tc.valueRot, tc.alibi, tc.learned)
		}
		if v.Doc == "" {
			t.Errorf("%s: no doc", tc.name)
		}
		if a := (Config{Variant: tc.name, Vocab: 3, DModel: 4, Layers: 1, Heads: 2, DHidden: 4, Context: 2}).Arch(); a.Validate() != nil ||
			a.Rotation != v.Rotation || a.ValueRot != v.ValueRot || a.ALiBi != v.ALiBi {
			t.Errorf("%s: arch %+v does not carry the variant's parts", tc.name, a)
		}
	}
	// Composition: a bias on a rotation family is one call.
	rv := random().withValueTransport().withALiBi("random-qkv-alibi")
	if rv.Rotation != RotationAccumulated || !rv.ValueRot || !rv.ALiBi || !strings.Contains(rv.Doc, "ALiBi") {
		t.Errorf("composed variant %+v", rv)
	}
}

// The Param* names are Config's JSON keys (they name fields in errors and
// train.json): a renamed tag without its constant fails here.
func TestParamNamesAreJSONKeys(t *testing.T) {
	keys := map[string]bool{}
	ct := reflect.TypeOf(Config{})
	for i := 0; i < ct.NumField(); i++ {
		keys[strings.Split(ct.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	for _, p := range []string{ParamVocab, ParamDModel, ParamLayers, ParamDHidden, ParamContext, ParamBatch, ParamSteps,
		ParamWarmup, ParamLR, ParamWeightDecay, ParamSigmaMin, ParamCheckpointEvery, ParamEvalEvery} {
		if !keys[p] {
			t.Errorf("Param name %q is not a JSON key of Config", p)
		}
	}
}

// How each accumulated variant's table starts and how fast it learns:
// learned-* from zeros at LearnedAngleLR, their -randinit twins from the
// random table at the base rate, random-* from the random table (fixed).
func TestAngleInitAndLRScale(t *testing.T) {
	base := Config{Profile: "test", Vocab: 5, DModel: 8, Heads: 2, SigmaMax: 1, SigmaMin: 0.35, Seed: 3}
	random := RandomAngleTable(5, 2, 2, 1, 0.35, 3)
	for _, tc := range []struct {
		name    string
		init    string
		lrScale float64
	}{
		{"random-qk", AngleInitRandom, 1}, {"random-qkv", AngleInitRandom, 1}, {"random-qkv-alibi", AngleInitRandom, 1},
		{"learned-qk", AngleInitZero, LearnedAngleLR}, {"learned-qkv", AngleInitZero, LearnedAngleLR},
		{"learned-qk-randinit", AngleInitRandom, 1}, {"learned-qkv-randinit", AngleInitRandom, 1},
	} {
		v, _ := LookupVariant(tc.name)
		c := base
		c.Variant = tc.name
		if v.AngleInit != tc.init || v.LRScale(AngleTable) != tc.lrScale {
			t.Errorf("%s: init %q lr x%g, want %q x%g", tc.name, v.AngleInit, v.LRScale(AngleTable), tc.init, tc.lrScale)
		}
		for _, p := range []string{"embed", "block000/wq", "normf"} {
			if s := v.LRScale(p); s != 1 {
				t.Errorf("%s: %s lr x%g, want 1", tc.name, p, s)
			}
		}
		a := InitialAngles(c)
		if !reflect.DeepEqual(a, random) != (tc.init == AngleInitZero) {
			t.Errorf("%s: initial table %v, want the %s one", tc.name, a, tc.init)
		}
		if len(a) != len(random) {
			t.Errorf("%s: initial table of %d values, want %d", tc.name, len(a), len(random))
		}
		for _, x := range a {
			if tc.init == AngleInitZero && x != 0 {
				t.Fatalf("%s: zero table holds %g", tc.name, x)
			}
		}
		if note := AngleNote(c); (tc.init == AngleInitZero) != strings.Contains(note, "zero table") {
			t.Errorf("%s: angle note %q", tc.name, note)
		}
	}
	for _, name := range []string{"nope", "rope", "alibi"} {
		c := base
		c.Variant = name
		if v, _ := LookupVariant(name); InitialAngles(c) != nil || v.LRScale(AngleTable) != 1 {
			t.Errorf("%s: has an initial angle table or an angle lr factor", name)
		}
	}
}

// learned-proj-qkv: no table, per-block projections at the base rate,
// the projection flag carried into the arch.
func TestAngleProjParts(t *testing.T) {
	v, err := LookupVariant("learned-proj-qkv")
	if err != nil {
		t.Fatal(err)
	}
	if !v.AngleProj || v.Learned || !v.ValueRot || v.Rotation != RotationAccumulated || v.HasAngleTable() || v.HostRotation() || v.OptIn {
		t.Errorf("learned-proj-qkv parts %+v", v)
	}
	if s := v.LRScale("block001/" + AngleProjName); s != 1 {
		t.Errorf("angle_proj lr x%g, want the base rate (modelspec/angleproj.go says why)", s)
	}
	for _, p := range []string{AngleTable, "block000/wq", "embed"} {
		if s := v.LRScale(p); s != 1 {
			t.Errorf("%s lr x%g, want 1", p, s)
		}
	}
	c := Config{Variant: v.Name, Vocab: 3, DModel: 8, Layers: 1, Heads: 2, DHidden: 4, Context: 2}
	if a := c.Arch(); !a.AngleProj || a.HasAngleTable() || a.Validate() != nil || !strings.Contains(a.AngleNote, "projected") {
		t.Errorf("arch %+v", a)
	}
	if InitialAngles(c) != nil {
		t.Error("learned-proj-qkv has an initial angle table")
	}
	if cos, _, err := RotationCosSin(c, nil, []int32{0, 1}, 1, 2); cos != nil || err != nil {
		t.Errorf("host rotation of projected angles: %v, %v", cos, err)
	}
	if got := AngleProjParams(8, 2); got != 32 {
		t.Errorf("AngleProjParams(8, 2) = %d, want 32", got)
	}
	if bad := (Arch{Variant: "x", Vocab: 3, DModel: 8, Layers: 1, Heads: 2, DHidden: 4, Context: 2, Rotation: RotationNone, AngleProj: true}); bad.Validate() == nil {
		t.Error("angle_proj without accumulated rotation validates")
	}
	d := DefaultVariants()
	for i, n := range d {
		if n == "learned-qkv" && (i+1 >= len(d) || d[i+1] != "learned-proj-qkv") {
			t.Errorf("defaults %v: learned-proj-qkv does not follow learned-qkv", d)
		}
	}
}

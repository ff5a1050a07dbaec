package spec

import (
	"reflect"
	"strings"
	"testing"
)

func TestVariantsRegistryOrder(t *testing.T) {
	want := "nope rope alibi random-qk random-qkv learned-qk learned-qkv"
	if got := strings.Join(Variants(), " "); got != want {
		t.Fatalf("Variants() = %q, want %q", got, want)
	}
	if _, err := LookupVariant("pope"); err == nil || !strings.Contains(err.Error(), "pope") {
		t.Fatalf("unknown variant error %v", err)
	}
}

func TestProfileConfigs(t *testing.T) {
	for _, p := range Profiles {
		for _, v := range Variants() {
			vocab := 257
			if p == "paper" {
				vocab = 50257
			}
			c, err := ProfileConfig(p, v, vocab)
			if err != nil {
				t.Fatalf("%s/%s: %v", p, v, err)
			}
			if c.Arch().Validate() != nil {
				t.Fatalf("%s/%s: invalid arch", p, v)
			}
		}
	}
	c, _ := ProfileConfig("paper", "rope", 50257)
	if c.Layers != 16 || c.DModel != 768 || c.Heads != 12 || c.Context != 512 {
		t.Fatalf("paper profile %+v", c)
	}
	if _, err := ProfileConfig("huge", "rope", 257); err == nil {
		t.Fatal("unknown profile accepted")
	}
	c.SigmaMin = 2
	c.Variant = "random-qk"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), ParamSigmaMin) {
		t.Fatalf("bad sigma accepted: %v", err)
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

package export

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"routebench/interop/safetensors"
	"routebench/modelspec"
	"routebench/modelspec/weights/weightstest"
)

func arch(variant string) modelspec.Arch {
	c := modelspec.Config{Variant: variant, Profile: "test", Vocab: 11, DModel: 16, Layers: 2, Heads: 4, DHidden: 24, Context: 8,
		SigmaMax: 1, SigmaMin: 0.35, Seed: 3}
	return c.Arch()
}

// Every default variant exports every tensor bit for bit under its
// routebench name, and a config.json carrying the arch and the derived
// facts its parts need.
func TestWriteRoundTrip(t *testing.T) {
	for _, v := range modelspec.DefaultVariants() {
		a := arch(v)
		set := weightstest.RandomSet(t, a, 5)
		dir := t.TempDir()
		if err := Write(dir, set, Source{Stage: "train/" + v, Digest: "d"}); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, ModelFile))
		if err != nil {
			t.Fatal(err)
		}
		ts, meta, err := safetensors.Read(data)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if meta["variant"] != v || meta["format"] != Format {
			t.Errorf("%s: metadata %v", v, meta)
		}
		if len(ts) != len(set.Tensors) {
			t.Fatalf("%s: %d tensors exported, the set has %d", v, len(ts), len(set.Tensors))
		}
		for i, st := range ts {
			w := set.Tensors[i]
			if st.Name != w.Name || !slices.Equal(st.Shape, w.Shape) || st.Dtype != safetensors.F32 || !slices.Equal(st.F32, w.Data) {
				t.Errorf("%s: tensor %d is %s %v, want %s %v with the same values", v, i, st.Name, st.Shape, w.Name, w.Shape)
			}
		}
		var c Config
		cj, err := os.ReadFile(filepath.Join(dir, ConfigFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(cj, &c); err != nil {
			t.Fatalf("%s: config.json: %v", v, err)
		}
		if c.Arch != a || c.DHead != 4 || c.Pairs != 2 || c.Source.Stage != "train/"+v {
			t.Errorf("%s: config %+v", v, c)
		}
		if got, want := len(c.ALiBiSlopes), map[bool]int{true: 4}[a.ALiBi]; got != want {
			t.Errorf("%s: %d ALiBi slopes, want %d", v, got, want)
		}
		if got, want := len(c.RopeFrequencies) > 0, a.Rotation == modelspec.RotationRoPE; got != want {
			t.Errorf("%s: rope frequencies %v", v, c.RopeFrequencies)
		}
		if got, want := c.PathNormEps > 0, a.Householder; got != want {
			t.Errorf("%s: path_norm_eps %g", v, c.PathNormEps)
		}
		if got, want := c.KerpleEps, map[bool]float64{true: modelspec.KerpleEps}[a.KerpleLog]; got != want {
			t.Errorf("%s: kerple_eps %g, want %g", v, got, want)
		}
		// KERPLE's p and a are per-block tensors, not config facts: a port
		// finds them in model.safetensors or not at all.
		kerple := 0
		for _, st := range ts {
			if strings.HasSuffix(st.Name, "/"+modelspec.KerpleP) || strings.HasSuffix(st.Name, "/"+modelspec.KerpleA) {
				kerple++
			}
		}
		if got, want := kerple, map[bool]int{true: 2 * a.Layers}[a.KerpleLog]; got != want {
			t.Errorf("%s: %d kerple_p and kerple_a tensors exported, want %d", v, got, want)
		}
		if matches, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(matches) > 0 {
			t.Errorf("%s: temporary files left: %v", v, matches)
		}
	}
}

// Identical weights give identical export files.
func TestWriteDeterministic(t *testing.T) {
	set := weightstest.RandomSet(t, arch("random-qkv-alibi"), 9)
	var files [2][]byte
	for i := range files {
		dir := t.TempDir()
		if err := Write(dir, set, Source{Stage: "train/random-qkv-alibi"}); err != nil {
			t.Fatal(err)
		}
		var err error
		if files[i], err = os.ReadFile(filepath.Join(dir, ModelFile)); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(files[0], files[1]) {
		t.Error("two exports of one set differ")
	}
}

// interop/torch/test_model.py checks the PyTorch port on the variants it
// lists: that list must be the default set, so that a new default variant
// cannot skip the port.
func TestTorchTestCoversDefaultVariants(t *testing.T) {
	src, err := os.ReadFile("../torch/test_model.py")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^VARIANTS = \[(.*)\]$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("interop/torch/test_model.py has no VARIANTS = [...] line")
	}
	var got []string
	for _, s := range strings.Split(string(m[1]), ",") {
		got = append(got, strings.Trim(strings.TrimSpace(s), `"`))
	}
	if want := modelspec.DefaultVariants(); !slices.Equal(got, want) {
		t.Errorf("test_model.py's VARIANTS = %v, modelspec.DefaultVariants() = %v: port the new variant to interop/torch/model.py and list it", got, want)
	}
}

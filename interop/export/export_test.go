package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"routebench/interop/safetensors"
	"routebench/modelspec"
	"routebench/modelspec/weights"
	"routebench/modelspec/weights/weightstest"
	"routebench/stages/tokenize"
	"routebench/stages/tokenize/shards"
)

func arch(variant string, vocab int) modelspec.Arch {
	c := modelspec.Config{Variant: variant, Profile: "test", Vocab: vocab, DModel: 16, Layers: 2, Heads: 4, DHidden: 24, Context: 8,
		SigmaMax: 1, SigmaMin: 0.35, Seed: 3}
	return c.Arch()
}

// testTokenizer is a tokenizer of v ids (the unit tests' models are
// smaller than any real vocabulary).
func testTokenizer(v int) Tokenizer {
	return Tokenizer{Kind: "test", VocabSize: v, SpecialIDs: map[string]int{"end_of_document": v - 1}}
}

func write(t *testing.T, dir string, set *weights.Set, o Options) (Result, error) {
	t.Helper()
	if o.Tokenizer.VocabSize == 0 {
		o.Tokenizer = testTokenizer(set.Arch.Vocab)
	}
	return Write(context.Background(), dir, set, Source{Stage: "train/" + set.Arch.Variant, Digest: "d"}, o)
}

// readExport reads an export's files and checks what every export must
// hold: metadata format pt beside ours, one weights digest in all files,
// equal to the hash of model.safetensors' data.
func readExport(t *testing.T, dir string) ([]safetensors.Tensor, map[string]string, Config) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	ts, meta, err := safetensors.Read(data)
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	cj, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(cj, &c); err != nil {
		t.Fatalf("config.json: %v", err)
	}
	body, _ := safetensors.DataSection(data)
	sum := sha256.Sum256(body)
	if d := hex.EncodeToString(sum[:]); meta["weights_sha256"] != d || c.WeightsSHA256 != d {
		t.Errorf("weights digest: metadata %q, config %q, data %q", meta["weights_sha256"], c.WeightsSHA256, d)
	}
	if meta["format"] != "pt" || meta["routebench_format"] != Format || c.ModelType != ModelType || c.Format != Format {
		t.Errorf("metadata %v, config model_type %q format %q", meta, c.ModelType, c.Format)
	}
	return ts, meta, c
}

// Every default variant exports every tensor under its state_dict name,
// linear maps transposed to nn.Linear's [out, in], and a config.json
// carrying the arch, the tokenizer and the derived facts its parts need.
func TestWriteRoundTrip(t *testing.T) {
	for _, v := range modelspec.DefaultVariants() {
		a := arch(v, 11)
		set := weightstest.RandomSet(t, a, 5)
		dir := filepath.Join(t.TempDir(), "train", v)
		if _, err := write(t, dir, set, Options{}); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		ts, meta, c := readExport(t, dir)
		if meta["variant"] != v {
			t.Errorf("%s: metadata %v", v, meta)
		}
		if len(ts) != len(set.Tensors) {
			t.Fatalf("%s: %d tensors exported, the set has %d", v, len(ts), len(set.Tensors))
		}
		byName := map[string]safetensors.Tensor{}
		for _, st := range ts {
			byName[st.Name] = st
		}
		for _, w := range set.Tensors {
			r, err := torchRuleOf(w.Name)
			if err != nil {
				t.Fatal(err)
			}
			st, ok := byName[r.name]
			if !ok {
				t.Errorf("%s: %s not exported as %s", v, w.Name, r.name)
				continue
			}
			want := w.Data
			shape := w.Shape
			if r.transpose {
				shape = []int{w.Shape[1], w.Shape[0]}
				want = make([]float32, len(w.Data))
				for i := range w.Shape[0] {
					for j := range w.Shape[1] {
						want[j*w.Shape[0]+i] = w.Data[i*w.Shape[1]+j]
					}
				}
			}
			if !slices.Equal(st.Shape, shape) || st.Dtype != safetensors.F32 || !slices.Equal(st.F32, want) {
				t.Errorf("%s: %s as %s is %v, want %v with the values of the transpose=%v", v, w.Name, r.name, st.Shape, shape, r.transpose)
			}
		}
		if c.Arch != a || c.DHead != 4 || c.Pairs != 2 || c.Source.Stage != "train/"+v || c.Tokenizer.VocabSize != 11 {
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
		if got, want := c.GateAccumulation != "", a.ForgetGate; got != want {
			t.Errorf("%s: gate_accumulation %q", v, c.GateAccumulation)
		}
		if got, want := c.KerpleEps, map[bool]float64{true: modelspec.KerpleEps}[a.KerpleLog]; got != want {
			t.Errorf("%s: kerple_eps %g, want %g", v, got, want)
		}
		if ents, _ := os.ReadDir(filepath.Dir(dir)); len(ents) != 1 {
			t.Errorf("%s: %d entries beside the export (temporary directories left?)", v, len(ents))
		}
	}
}

// A tensor the map does not know is an error naming it, not an export a
// strict load would refuse later.
func TestTorchNameUnknown(t *testing.T) {
	set := weightstest.RandomSet(t, arch("rope", 11), 5)
	set.Tensors = append(set.Tensors, weights.Tensor{Name: "block000/wnew", Shape: []int{1}, Data: []float32{0}})
	_, err := write(t, t.TempDir(), set, Options{})
	if err == nil || !strings.Contains(err.Error(), `"block000/wnew" has no name in interop/torch/model.py's state_dict`) {
		t.Fatalf("error %v", err)
	}
}

// Identical weights give identical export files.
func TestWriteDeterministic(t *testing.T) {
	set := weightstest.RandomSet(t, arch("random-qkv-alibi", 11), 9)
	var files [2][]byte
	for i := range files {
		dir := filepath.Join(t.TempDir(), "x")
		if _, err := write(t, dir, set, Options{}); err != nil {
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

// snapshot reads every file of dir.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// byteDataset tokenizes a few documents with the bytes tokenizer, as the
// tokenize stage does, and opens its shards.
func byteDataset(t *testing.T) *shards.Dataset {
	t.Helper()
	corpus := filepath.Join(t.TempDir(), "books")
	if err := os.MkdirAll(corpus, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		text := strings.Repeat(fmt.Sprintf("Document %d says h\u00e9llo to the world.\r\n", i), 20+i)
		if err := os.WriteFile(filepath.Join(corpus, fmt.Sprintf("doc%d.txt", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "shards")
	cfg := tokenize.Config{Tokenizer: tokenize.TokenizerBytes, Corpus: []string{corpus}, ValFraction: 0.5, Seed: 1, ShardTokens: 256, Workers: 1}
	if err := tokenize.Run(context.Background(), cfg, out, nil); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(out)
	var paths []string
	for _, e := range ents {
		paths = append(paths, filepath.Join(out, e.Name()))
	}
	ds, err := shards.Open(paths)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	return ds
}

// An export is replaced whole: the same weights silently (the reference
// follows the request: asked for, rewritten; not asked for, gone), other
// weights only with Force; a directory that is no export never; and a
// failure half way leaves the old export byte for byte, with nothing
// left beside it.
func TestReplace(t *testing.T) {
	ds := byteDataset(t)
	tok, err := TokenizerOf(ds.Info())
	if err != nil {
		t.Fatal(err)
	}
	if tok.Kind != "bytes" || tok.VocabSize != 257 || tok.SpecialIDs["end_of_document"] != 256 || !strings.Contains(tok.Normalisation, "CRLF -> LF") {
		t.Errorf("tokenizer %+v", tok)
	}
	a := arch("rope", 257)
	setA, setB := weightstest.RandomSet(t, a, 1), weightstest.RandomSet(t, a, 2)
	dir := filepath.Join(t.TempDir(), "train", "rope")
	ref := &ReferenceSpec{Data: ds, Seed: 7, Windows: 2, Len: 16}

	res, err := write(t, dir, setA, Options{Tokenizer: tok, Reference: ref})
	if err != nil || res.Replaced {
		t.Fatalf("first export: %+v, %v", res, err)
	}
	_, _, c := readExport(t, dir)
	rdata, err := os.ReadFile(filepath.Join(dir, ReferenceFile))
	if err != nil {
		t.Fatal(err)
	}
	rts, rmeta, err := safetensors.Read(rdata)
	if err != nil {
		t.Fatal(err)
	}
	if rmeta["weights_sha256"] != c.WeightsSHA256 || rmeta["format"] != "pt" || len(rts) != 2 || !slices.Equal(rts[1].Shape, []int{2, 17}) {
		t.Errorf("reference: metadata %v, tensors %v", rmeta, rts)
	}
	if c.Tokenizer.Kind != "bytes" {
		t.Errorf("config tokenizer %+v", c.Tokenizer)
	}

	// The same weights without a reference: replaced, and the old
	// reference does not outlive them.
	if res, err := write(t, dir, setA, Options{Tokenizer: tok}); err != nil || !res.Replaced || res.ReplacedOther {
		t.Fatalf("re-export: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ReferenceFile)); !os.IsNotExist(err) {
		t.Errorf("reference.safetensors outlived a re-export without one: %v", err)
	}
	if _, err := write(t, dir, setA, Options{Tokenizer: tok, Reference: ref}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)

	// Other weights: refused without Force, dir untouched.
	_, err = write(t, dir, setB, Options{Tokenizer: tok})
	if err == nil || !strings.Contains(err.Error(), "other weights") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("other weights without force: %v", err)
	}
	if !sameFiles(before, snapshot(t, dir)) {
		t.Error("a refused export changed the directory")
	}

	// A failure half way (after model.safetensors is written) leaves the
	// old export byte for byte. Control: the same export unbroken does
	// change it, so the comparison can fail.
	publishBroken = ModelFile
	_, err = write(t, dir, setB, Options{Tokenizer: tok, Force: true})
	publishBroken = ""
	if err == nil {
		t.Fatal("broken publish succeeded")
	}
	if !sameFiles(before, snapshot(t, dir)) {
		t.Error("a failed export changed the old one")
	}
	if ents, _ := os.ReadDir(filepath.Dir(dir)); len(ents) != 1 {
		t.Errorf("%d entries beside the export after a failure, want 1", len(ents))
	}
	res, err = write(t, dir, setB, Options{Tokenizer: tok, Force: true})
	if err != nil || !res.Replaced || !res.ReplacedOther {
		t.Fatalf("forced export: %+v, %v", res, err)
	}
	after := snapshot(t, dir)
	if sameFiles(before, after) {
		t.Fatal("control: a forced export of other weights left the files as they were")
	}
	if _, ok := after[ReferenceFile]; ok {
		t.Error("the old weights' reference survived the forced export")
	}

	// A directory holding anything else is never replaced.
	foreign := filepath.Join(t.TempDir(), "mine")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	_, err = write(t, foreign, setA, Options{Tokenizer: tok, Force: true})
	if err == nil || !strings.Contains(err.Error(), "notes.txt, which no export writes") {
		t.Fatalf("foreign directory: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(foreign, "notes.txt")); string(b) != "mine" {
		t.Error("the foreign file was touched")
	}
}

// A tokenizer whose size is not the model's is refused.
func TestTokenizerVocabMismatch(t *testing.T) {
	set := weightstest.RandomSet(t, arch("nope", 11), 5)
	_, err := write(t, t.TempDir(), set, Options{Tokenizer: testTokenizer(257)})
	if err == nil || !strings.Contains(err.Error(), "has 257 ids, the model 11") {
		t.Fatalf("error %v", err)
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

package stages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"routebench/spec"
	"routebench/stages/theory"
)

// Profile holds every knob of a reproduction, and builtin below is the one
// place the built-in profiles are defined (training, evaluation, theory,
// benchmarks). A JSON file given with --config overrides fields by name,
// nested ones too ({"train": {"steps": 200}}); unknown fields are an error,
// so a typo cannot silently do nothing.
//
// This package is salted into no stage: editing a profile's defaults
// re-keys exactly the stages whose config values change.
type Profile struct {
	Name string `json:"name"`
	// Data
	Tokenizer string   `json:"tokenizer"` // bytes | gpt2
	Corpus    []string `json:"corpus"`    // empty: the default Gutenberg corpus
	// Variants to train (empty: the whole registry, spec.Variants).
	Variants []string `json:"variants"`
	// Train is every training knob (spec.Config). Variant, profile and
	// vocabulary are filled in by Build (vocabulary from the tokenizer), and
	// the backend from Backend; a warmup longer than the steps is clamped.
	Train spec.Config `json:"train"`
	// Backend is gomlx's backend for training: "go" (CPU, default) or
	// "xla:/abs/path/to/pjrt_plugin.so" (GPU binary only). Empty: $GOMLX_BACKEND, else "go".
	Backend string `json:"backend"`
	// Evaluation
	LengthMultipliers []int  `json:"length_multipliers"` // evaluation lengths = T x these
	Windows           int    `json:"windows"`            // windows per length
	EvalSeed          uint64 `json:"eval_seed"`
	// Theory is the theory stage's configuration (theory.SmokeConfig or
	// theory.CPUConfig, overridable field by field).
	Theory theory.Config `json:"theory"`
	// Kernel benchmarks
	BenchCount   int   `json:"bench_count"`   // repetitions of each kernel benchmark
	BenchLengths []int `json:"bench_lengths"` // attention lengths benchmarked
}

// trainDefaults are the hyperparameters every built-in profile shares.
func trainDefaults() spec.Config {
	return spec.Config{LR: 2e-3, MinLR: 1e-4, WeightDecay: 0.01, Clip: 1.0, SigmaMax: 1.0, SigmaMin: 0.35, Seed: 1}
}

// cpuStepsNote justifies the cpu profile's 400 steps; it is copied into train.json.
const cpuStepsNote = "cpu profile: 400 steps x 16 windows x 128 tokens (819K tokens). BenchmarkStepRatio " +
	"(2 cores, 2026-11-30): fastest steps 0.79-0.98 s for the 7 variants (6.0-6.5 GFLOP each), so ~5.5-6.5 min " +
	"per variant with evaluation and ~40 min for all 7 on an idle machine; the pilot showed the paper's ordering " +
	"after 400 steps of this model. On a machine shared with other jobs, steps were 1.6-2.1 s (median)."

// builtin returns the built-in profiles (fresh values: callers may modify them).
//
//   - smoke: a seconds-scale model for CI; 240 steps so that the variants
//     differ by percents, enough for the CI gate to see a change to one.
//   - cpu: the pilot's model (d 128, 2 layers, 4 heads, T 128, batch 16, byte
//     tokens), sized so all seven variants fit in ~40 minutes of 2 cores.
//   - paper: the paper's 16 x 768, 12 heads, context 512, GPT-2 vocabulary; for GPUs.
func builtin() map[string]Profile {
	smoke := trainDefaults()
	smoke.DModel, smoke.Layers, smoke.Heads, smoke.DHidden = 32, 2, 2, 128
	smoke.Context, smoke.Batch, smoke.Steps, smoke.Warmup = 32, 8, 240, 6
	smoke.LR = 3e-3
	smoke.CheckpointEvery, smoke.EvalEvery, smoke.EvalBatches = 20, 20, 2

	cpu := trainDefaults()
	cpu.DModel, cpu.Layers, cpu.Heads, cpu.DHidden = 128, 2, 4, 512
	cpu.Context, cpu.Batch, cpu.Steps, cpu.Warmup = 128, 16, 400, 40
	cpu.CheckpointEvery, cpu.EvalEvery, cpu.EvalBatches = 50, 50, 4
	cpu.StepsNote = cpuStepsNote

	paper := trainDefaults()
	paper.DModel, paper.Layers, paper.Heads, paper.DHidden = 768, 16, 12, 3072
	paper.Context, paper.Batch, paper.Steps, paper.Warmup = 512, 32, 50000, 2000
	paper.LR, paper.MinLR, paper.WeightDecay = 6e-4, 6e-5, 0.1
	paper.CheckpointEvery, paper.EvalEvery, paper.EvalBatches = 1000, 1000, 16

	long := []int{1, 2, 4, 8, 16, 32, 64, 128}
	return map[string]Profile{
		"smoke": {
			Name: "smoke", Tokenizer: "bytes", Train: smoke,
			LengthMultipliers: []int{1, 2, 4, 8}, Windows: 4, EvalSeed: 7, Theory: theory.SmokeConfig(), BenchCount: 1, BenchLengths: []int{1024},
		},
		"cpu": {
			Name: "cpu", Tokenizer: "bytes", Train: cpu,
			LengthMultipliers: long, Windows: 16, EvalSeed: 7, Theory: theory.CPUConfig(), BenchCount: 5, BenchLengths: []int{1024, 4096},
		},
		"paper": {
			Name: "paper", Tokenizer: "gpt2", Train: paper,
			LengthMultipliers: long, Windows: 16, EvalSeed: 7, Theory: theory.CPUConfig(), BenchCount: 5, BenchLengths: []int{1024, 4096},
		},
	}
}

// ProfileNames lists the built-in profiles.
func ProfileNames() []string {
	var n []string
	for k := range builtin() {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// LoadProfile returns a built-in profile with the overrides in configPath
// (may be empty) applied.
func LoadProfile(name, configPath string) (Profile, error) {
	return LoadProfileWith(name, Overrides{Config: configPath})
}

// Overrides are the command line's changes to a built-in profile. They are
// applied in field order, so a --set wins over the file it follows.
type Overrides struct {
	Config string   // a JSON file of fields (--config); may be empty
	Set    []string // key=value assignments (--set), see SetPatch
	Corpus []string // replaces the corpus field when non-empty (--corpus)
}

// LoadProfileWith returns a built-in profile with the overrides applied.
func LoadProfileWith(name string, o Overrides) (Profile, error) {
	p, ok := builtin()[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown profile %q (choose one of: %s)", name, strings.Join(ProfileNames(), ", "))
	}
	if o.Config != "" {
		data, err := os.ReadFile(o.Config)
		if err != nil {
			return Profile{}, fmt.Errorf("config %s: %w", o.Config, err)
		}
		if err := p.override(data); err != nil {
			return Profile{}, fmt.Errorf("config %s is malformed: %w (fix the JSON; fields are those of stages.Profile)", o.Config, err)
		}
		if p.Name != name {
			return Profile{}, fmt.Errorf("config %s sets name %q but the profile is %q; drop the name field", o.Config, p.Name, name)
		}
	}
	for _, a := range o.Set {
		patch, err := SetPatch(a)
		if err != nil {
			return Profile{}, err
		}
		// The same decoder as the file's, so a --set and the same field in
		// a --config file cannot mean different things.
		if err := p.override(patch); err != nil {
			return Profile{}, fmt.Errorf("--set %s: %w (patch %s)", a, err, patch)
		}
		if p.Name != name {
			return Profile{}, fmt.Errorf("--set %s: the name is the profile's (--profile %s); drop this --set", a, name)
		}
	}
	if len(o.Corpus) > 0 {
		p.Corpus = append([]string(nil), o.Corpus...)
	}
	return p, p.validate()
}

// override decodes JSON onto p: named fields replace (slices whole), nested
// objects merge field by field, unknown fields are an error.
func (p *Profile) override(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(p)
}

func (p Profile) validate() error {
	switch p.Tokenizer {
	case "bytes", "gpt2":
	default:
		return fmt.Errorf("profile %s: tokenizer %q is not bytes or gpt2", p.Name, p.Tokenizer)
	}
	if p.Windows <= 0 || len(p.LengthMultipliers) == 0 {
		return fmt.Errorf("profile %s: windows (%d) and length_multipliers (%v) must be positive/non-empty", p.Name, p.Windows, p.LengthMultipliers)
	}
	for i, m := range p.LengthMultipliers {
		if m <= 0 || (i > 0 && m <= p.LengthMultipliers[i-1]) {
			return fmt.Errorf("profile %s: length_multipliers %v must be positive and increasing", p.Name, p.LengthMultipliers)
		}
	}
	if p.BenchCount <= 0 || len(p.BenchLengths) == 0 {
		return fmt.Errorf("profile %s: bench_count %d and bench_lengths %v must be positive/non-empty", p.Name, p.BenchCount, p.BenchLengths)
	}
	if p.Train.Variant != "" || p.Train.Profile != "" || p.Train.Vocab != 0 || p.Train.Backend != "" {
		return fmt.Errorf("profile %s: train.variant, train.profile, train.vocab and train.backend are set by the pipeline "+
			"(variants, the profile name, the tokenizer, backend); drop them from the config and --set", p.Name)
	}
	return nil
}

// Keys --set accepts are derived from Profile's JSON tags, so they cannot
// drift from what a --config file accepts: every leaf field by its dotted
// JSON path ("windows", "train.sigma_min", "theory.mixing.queries"; slices
// and maps are leaves), plus the bare JSON name of each training knob
// ("sigma_min" for train.sigma_min) unless that name also ends a path
// outside train: a top-level field wins ("backend" is not train.backend),
// and any other is rejected as ambiguous ("seed": train.seed or theory.seed?).
type setKeys struct {
	fields    map[string]reflect.Type // path -> the leaf's type
	aliases   map[string]string       // bare training knob -> train.<knob>
	ambiguous map[string][]string     // bare name -> the paths it could mean
}

// trainKey is the JSON name of Profile.Train, the struct the aliases reach into.
var trainKey = func() string {
	f, _ := reflect.TypeFor[Profile]().FieldByName("Train")
	return jsonName(f)
}()

func profileSetKeys() setKeys {
	k := setKeys{fields: map[string]reflect.Type{}, aliases: map[string]string{}, ambiguous: map[string][]string{}}
	walkJSON(reflect.TypeFor[Profile](), "", k.fields)
	for path := range k.fields {
		bare, ok := strings.CutPrefix(path, trainKey+".")
		if !ok || strings.Contains(bare, ".") {
			continue
		}
		var others []string
		for q := range k.fields {
			if q != path && (q == bare || strings.HasSuffix(q, "."+bare)) {
				others = append(others, q)
			}
		}
		if len(others) > 0 {
			k.ambiguous[bare] = append(others, path)
			sort.Strings(k.ambiguous[bare])
			continue
		}
		k.aliases[bare] = path
	}
	return k
}

// jsonName is the name encoding/json gives a struct field ("" for "-").
func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name
	}
	return f.Name
}

// walkJSON records the leaves of struct type t under prefix.
func walkJSON(t reflect.Type, prefix string, out map[string]reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := jsonName(f)
		if name == "" {
			continue
		}
		switch {
		case f.Anonymous && f.Type.Kind() == reflect.Struct && !strings.Contains(f.Tag.Get("json"), ","):
			walkJSON(f.Type, prefix, out) // encoding/json flattens untagged embedded structs
		case f.Type.Kind() == reflect.Struct:
			walkJSON(f.Type, prefix+name+".", out)
		default:
			out[prefix+name] = f.Type
		}
	}
}

// valid lists every key --set accepts, for error messages.
func (k setKeys) valid() string {
	var names []string
	for p := range k.fields {
		names = append(names, p)
	}
	for a := range k.aliases {
		names = append(names, a)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// SetPatch turns one --set assignment ("train.sigma_min=0.1") into the JSON
// object a --config file would hold for it ({"train":{"sigma_min":0.1}}).
// The value is parsed by the field's type: a JSON literal of that type, or
// else plain text (a string; a comma-separated list for a slice of scalars,
// empty for an empty list; numbers like .5 that JSON lacks).
func SetPatch(assignment string) ([]byte, error) {
	key, raw, ok := strings.Cut(assignment, "=")
	if !ok || key == "" {
		return nil, fmt.Errorf("--set %q: want key=value, e.g. --set train.steps=200", assignment)
	}
	k := profileSetKeys()
	path := key
	if alias, ok := k.aliases[key]; ok {
		path = alias
	}
	typ, ok := k.fields[path]
	if !ok {
		if paths, amb := k.ambiguous[key]; amb {
			return nil, fmt.Errorf("--set: key %q is ambiguous (it could be %s); give the full path", key, strings.Join(paths, " or "))
		}
		return nil, fmt.Errorf("--set: unknown key %q (valid: %s)", key, k.valid())
	}
	val, err := parseSetValue(typ, raw)
	if err != nil {
		return nil, fmt.Errorf("--set %s: %s wants %s (e.g. --set %s=%s): %w", assignment, path, describeType(typ), key, exampleOf(typ), err)
	}
	var patch any = val
	segs := strings.Split(path, ".")
	for i := len(segs) - 1; i >= 0; i-- {
		patch = map[string]any{segs[i]: patch}
	}
	return json.Marshal(patch)
}

// parseSetValue is the JSON for raw as a value of type t.
func parseSetValue(t reflect.Type, raw string) (json.RawMessage, error) {
	if json.Unmarshal([]byte(raw), reflect.New(t).Interface()) == nil {
		return json.RawMessage(raw), nil
	}
	switch t.Kind() {
	case reflect.String:
		return json.Marshal(raw)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(raw), t.Bits())
		if err != nil {
			return nil, err
		}
		return json.Marshal(f) // fails for Inf and NaN, which no knob takes
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return nil, err
		}
		return json.Marshal(b)
	case reflect.Slice:
		if isScalar(t.Elem()) {
			elems := []json.RawMessage{}
			if strings.TrimSpace(raw) != "" {
				for i, e := range strings.Split(raw, ",") {
					v, err := parseSetValue(t.Elem(), strings.TrimSpace(e))
					if err != nil {
						return nil, fmt.Errorf("element %d (%q): %w", i+1, e, err)
					}
					elems = append(elems, v)
				}
			}
			return json.Marshal(elems)
		}
	}
	// Unmarshal again for its message, which says what it found.
	return nil, json.Unmarshal([]byte(raw), reflect.New(t).Interface())
}

func isScalar(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// describeType says in words what a value of t looks like.
func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Slice:
		if isScalar(t.Elem()) {
			return "a comma-separated list (each " + describeType(t.Elem()) + ") or a JSON array"
		}
	}
	return "JSON for a " + t.String()
}

// exampleOf is a value of t's shape for error messages.
func exampleOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "bytes"
	case reflect.Bool:
		return "true"
	case reflect.Float32, reflect.Float64:
		return "0.1"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "4"
	case reflect.Slice:
		switch e := t.Elem(); {
		case e.Kind() == reflect.String:
			return `rope,alibi or '["rope","alibi"]'`
		case isScalar(e):
			x := exampleOf(e)
			return x + "," + x + " or [" + x + "," + x + "]"
		}
		return "[...]"
	}
	return "{...}"
}

package planner

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"routebench/modelspec"
	"routebench/modelspec/weights/weightstest"
)

// Every built-in profile gives a valid training config for every variant,
// and the paper profile is the paper's model.
func TestBuiltinProfilesTrainConfigs(t *testing.T) {
	for _, name := range ProfileNames() {
		p, err := LoadProfile(name, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range modelspec.Variants() {
			c := p.Train
			c.Variant, c.Profile, c.Vocab = v, name, vocabOf(p.Tokenizer)
			if err := c.Validate(); err != nil {
				t.Errorf("%s/%s: %v", name, v, err)
			}
		}
	}
	p, _ := LoadProfile("paper", "")
	if c := p.Train; c.Layers != 16 || c.DModel != 768 || c.Heads != 12 || c.Context != 512 {
		t.Fatalf("paper profile %+v", c)
	}
}

// Overrides reach nested training and theory fields; the fields the
// pipeline sets are refused with the fix.
func TestProfileOverrides(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		f := filepath.Join(dir, "o.json")
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	p, err := LoadProfile("smoke", write(`{"train": {"steps": 4, "sigma_min": 0.1}, "theory": {"seed": 9}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Train.Steps != 4 || p.Train.SigmaMin != 0.1 || p.Train.DModel != 32 || p.Theory.Seed != 9 || p.Theory.Mixing.Queries == 0 {
		t.Fatalf("overrides not applied field by field: train %+v, theory seed %d", p.Train, p.Theory.Seed)
	}
	plan, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range plan.Stages {
		if c, ok := s.Config.(modelspec.Config); ok && (c.Steps != 4 || c.Warmup != 4) {
			t.Fatalf("%s: steps %d warmup %d, want 4 and the warmup clamped to 4", s.Name, c.Steps, c.Warmup)
		}
	}
	if _, err := LoadProfile("smoke", write(`{"train": {"vocab": 9}}`)); err == nil || !strings.Contains(err.Error(), "drop them") {
		t.Fatalf("train.vocab override: %v", err)
	}
	if _, err := LoadProfile("smoke", write(`{"train": {"d_modle": 9}}`)); err == nil || !strings.Contains(err.Error(), "d_modle") {
		t.Fatalf("unknown nested field: %v", err)
	}
}

// A --set gives the profile the same override in a --config file gives,
// whether it names the full path, the training alias or a list as text.
func TestSetEqualsConfig(t *testing.T) {
	cases := []struct {
		set  []string
		json string
	}{
		{[]string{"train.sigma_min=0.1"}, `{"train": {"sigma_min": 0.1}}`},
		{[]string{"sigma_min=.1", "steps=12"}, `{"train": {"sigma_min": 0.1, "steps": 12}}`},
		{[]string{"windows=4", "eval_seed=9"}, `{"windows": 4, "eval_seed": 9}`},
		{[]string{"length_multipliers=1,2,4"}, `{"length_multipliers": [1, 2, 4]}`},
		{[]string{"length_multipliers=[1,2,4]"}, `{"length_multipliers": [1, 2, 4]}`},
		{[]string{"variants=rope,alibi"}, `{"variants": ["rope", "alibi"]}`},
		{[]string{`variants=["rope"]`, "tokenizer=gpt2"}, `{"variants": ["rope"], "tokenizer": "gpt2"}`},
		{[]string{"theory.seed=5", "train.seed=6", "theory.mixing.queries=3"}, `{"theory": {"seed": 5, "mixing": {"queries": 3}}, "train": {"seed": 6}}`},
		{[]string{"backend=go"}, `{"backend": "go"}`},                                                    // the top-level field, not train.backend
		{[]string{"windows=3", "windows=5"}, `{"windows": 5}`},                                           // the last one wins
		{[]string{"kernel_speed_lengths=", "kernel_speed_lengths=64"}, `{"kernel_speed_lengths": [64]}`}, // a list is replaced whole
	}
	dir := t.TempDir()
	for i, c := range cases {
		f := filepath.Join(dir, fmt.Sprintf("%d.json", i))
		if err := os.WriteFile(f, []byte(c.json), 0o644); err != nil {
			t.Fatal(err)
		}
		want, err := LoadProfile("smoke", f)
		if err != nil {
			t.Fatalf("config %s: %v", c.json, err)
		}
		got, err := LoadProfileWith("smoke", Overrides{Set: c.set})
		if err != nil {
			t.Fatalf("--set %v: %v", c.set, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("--set %v gives\n%+v\nbut config %s gives\n%+v", c.set, got, c.json, want)
		}
		if base, _ := LoadProfile("smoke", ""); reflect.DeepEqual(got, base) {
			t.Errorf("--set %v changed nothing", c.set)
		}
	}
	// A --set applies after the file.
	f := filepath.Join(dir, "file.json")
	os.WriteFile(f, []byte(`{"windows": 2, "train": {"steps": 7}}`), 0o644)
	p, err := LoadProfileWith("smoke", Overrides{Config: f, Set: []string{"windows=6"}, Corpus: []string{"a.txt", "b/"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Windows != 6 || p.Train.Steps != 7 || !reflect.DeepEqual(p.Corpus, []string{"a.txt", "b/"}) {
		t.Fatalf("file then --set then --corpus: windows %d steps %d corpus %v, want 6, 7, [a.txt b/]", p.Windows, p.Train.Steps, p.Corpus)
	}
}

// Every training knob is settable by its JSON path; the set of keys is
// derived from the struct tags, so a new knob needs no second list.
func TestSetKeysCoverTrainConfig(t *testing.T) {
	k := profileSetKeys()
	typ := reflect.TypeFor[modelspec.Config]()
	for i := range typ.NumField() {
		name := jsonName(typ.Field(i))
		if _, ok := k.fields["train."+name]; !ok {
			t.Errorf("train.%s is not a --set key", name)
		}
	}
	if k.aliases["sigma_min"] != "train.sigma_min" || k.aliases["d_model"] != "train.d_model" {
		t.Errorf("aliases: %v", k.aliases)
	}
	if p, ok := profileSetKeys().fields["backend"]; k.aliases["backend"] != "" || !ok || p.Kind() != reflect.String {
		t.Error("backend is an alias of train.backend, but the top-level field must win")
	}
	if _, ok := k.aliases["seed"]; ok {
		t.Error("seed is an alias, but train.seed and theory.seed make it ambiguous")
	}
}

// Each bad --set is one line that says what is wrong and what would do.
func TestSetErrors(t *testing.T) {
	cases := []struct{ set, want string }{
		{"sigma_mn=0.1", `--set: unknown key "sigma_mn" (valid: backend, batch, checkpoint_every,`},
		{"sigma_mn=0.1", "train.sigma_min, "},
		{"train.nope=1", `unknown key "train.nope"`},
		{"theory.mixing=1", `unknown key "theory.mixing"`}, // a struct is not a leaf
		{"seed=3", `key "seed" is ambiguous (it could be theory.seed or train.seed); give the full path`},
		{"windows", `--set "windows": want key=value`},
		{"=4", `want key=value`},
		{"windows=many", "--set windows=many: windows wants an integer (e.g. --set windows=4)"},
		{"windows=2.5", "windows wants an integer"},
		{"eval_seed=-1", "eval_seed wants a non-negative integer"},
		{"lr=fast", "train.lr wants a number (e.g. --set lr=0.1)"},
		{"length_multipliers=1,x,4", `length_multipliers wants a comma-separated list (each an integer) or a JSON array (e.g. --set length_multipliers=4,4 or [4,4]): element 2 ("x")`},
		{"windows=0", "windows (0) and length_multipliers"}, // parsed, then validated
		{"name=big", "the name is the profile's (--profile smoke)"},
		{"train.vocab=9", "set by the pipeline"},
	}
	for _, c := range cases {
		_, err := LoadProfileWith("smoke", Overrides{Set: []string{c.set}})
		if err == nil {
			t.Errorf("--set %s: no error", c.set)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("--set %s: error %q lacks %q (or is not one line)", c.set, msg, c.want)
		}
	}
}

// A profile that names no variants trains the registry's defaults (the
// rotation + bias combination included, the -randinit twins not); a named
// on-request variant is trained when asked for.
func TestDefaultVariantsInPlan(t *testing.T) {
	trains := func(p Profile) map[string]bool {
		plan, err := Build(p)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, s := range plan.Stages {
			if c, ok := s.Config.(modelspec.Config); ok {
				got[c.Variant] = true
			}
		}
		return got
	}
	p, err := LoadProfile("smoke", "")
	if err != nil {
		t.Fatal(err)
	}
	got := trains(p)
	if !got["random-qkv-alibi"] || !got["learned-qk"] || got["learned-qk-randinit"] || got["learned-qkv-randinit"] || len(got) != len(modelspec.DefaultVariants()) {
		t.Fatalf("default plan trains %v, want %v", got, modelspec.DefaultVariants())
	}
	p.Variants = []string{"learned-qk-randinit"}
	if got := trains(p); len(got) != 1 || !got["learned-qk-randinit"] {
		t.Fatalf("named plan trains %v, want learned-qk-randinit only", got)
	}
}

// weightstest.PaperArch is a copy of the paper profile's shape for the
// packages the planner itself imports (their tests cannot import it back);
// it must stay the profile's.
func TestPaperArchIsTheProfiles(t *testing.T) {
	cfg, err := TrainConfig("paper", "random-qkv")
	if err != nil {
		t.Fatal(err)
	}
	want := cfg.Arch()
	got := weightstest.PaperArch()
	want.AngleNote, got.AngleNote = "", "" // the note names the seed and sigmas, not the shape
	if !reflect.DeepEqual(got, want) {
		t.Errorf("weightstest.PaperArch() = %+v\nthe paper profile's random-qkv = %+v", got, want)
	}
}

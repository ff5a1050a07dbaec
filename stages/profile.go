package stages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Profile holds every knob of a reproduction. The built-in profiles are
// below; a JSON file given with --config overrides fields by name (unknown
// fields are an error, so a typo cannot silently do nothing).
type Profile struct {
	Name string `json:"name"`
	// Data
	Tokenizer string   `json:"tokenizer"` // bytes | gpt2
	Corpus    []string `json:"corpus"`    // empty: the default Gutenberg corpus
	// Model and training (see model.ProfileConfig for the rest)
	Variants []string `json:"variants"`
	Steps    int      `json:"steps"` // 0: the model profile's default
	// Backend is gomlx's backend for training: "go" (CPU, default) or
	// "xla:/abs/path/to/pjrt_plugin.so" (GPU binary only). Empty: $GOMLX_BACKEND, else "go".
	Backend string `json:"backend"`
	// Evaluation
	LengthMultipliers []int  `json:"length_multipliers"` // evaluation lengths = T x these
	Windows           int    `json:"windows"`            // windows per length
	EvalSeed          uint64 `json:"eval_seed"`
	// Theory
	Theory string `json:"theory"` // smoke | cpu
	// Kernel benchmarks
	BenchCount   int   `json:"bench_count"`   // repetitions of each kernel benchmark
	BenchLengths []int `json:"bench_lengths"` // attention lengths benchmarked
}

var builtin = map[string]Profile{
	// smoke trains 240 steps (model default: 60) so that the variants
	// differ by percents, enough for the CI gate to see a change to one.
	"smoke": {
		Name: "smoke", Tokenizer: "bytes", Steps: 240,
		LengthMultipliers: []int{1, 2, 4, 8}, Windows: 4, EvalSeed: 7, Theory: "smoke", BenchCount: 1, BenchLengths: []int{1024},
	},
	"cpu": {
		Name: "cpu", Tokenizer: "bytes",
		LengthMultipliers: []int{1, 2, 4, 8, 16, 32, 64, 128}, Windows: 16, EvalSeed: 7, Theory: "cpu", BenchCount: 5, BenchLengths: []int{1024, 4096},
	},
	"paper": {
		Name: "paper", Tokenizer: "gpt2",
		LengthMultipliers: []int{1, 2, 4, 8, 16, 32, 64, 128}, Windows: 16, EvalSeed: 7, Theory: "cpu", BenchCount: 5, BenchLengths: []int{1024, 4096},
	},
}

// ProfileNames lists the built-in profiles.
func ProfileNames() []string {
	var n []string
	for k := range builtin {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// LoadProfile returns a built-in profile with the overrides in configPath
// (may be empty) applied.
func LoadProfile(name, configPath string) (Profile, error) {
	p, ok := builtin[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown profile %q (choose one of: %s)", name, strings.Join(ProfileNames(), ", "))
	}
	if configPath == "" {
		return p, nil
	}
	data, err := os.ReadFile(configPath)
	if err != nil {
		return Profile{}, fmt.Errorf("config %s: %w", configPath, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Profile{}, fmt.Errorf("config %s is malformed: %v (fix the JSON; fields are those of stages.Profile)", configPath, err)
	}
	if p.Name != name {
		return Profile{}, fmt.Errorf("config %s sets name %q but the profile is %q; drop the name field", configPath, p.Name, name)
	}
	return p, p.validate()
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
	if p.Steps < 0 {
		return fmt.Errorf("profile %s: steps %d is negative", p.Name, p.Steps)
	}
	return nil
}

package theory

import (
	"context"
	"strings"
	"testing"
)

func TestPresetsValidate(t *testing.T) {
	for _, c := range []Config{SmokeConfig(), CPUConfig()} {
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
}

// Bad parameters give errors that name the field, the value and a fix.
func TestValidateRejectsBadParameters(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*Config)
		wants []string
	}{
		{"odd so2 dim", func(c *Config) { c.Mixing.Families[0].Dim = 7 }, []string{"mixing.families[0]", "dim=7", "even"}},
		{"negative scale", func(c *Config) { c.Mixing.Families[1].Scale = -0.5 }, []string{"mixing.families[1]", "scale=-0.5", "negative"}},
		{"unknown kind", func(c *Config) { c.Mixing.Families[0].Kind = "rope" }, []string{"kind \"rope\"", "use so2"}},
		{"K = 0", func(c *Config) { c.FarMass.Near = []int{0, 16} }, []string{"far_mass.near", "K=0"}},
		{"odd far-mass dim", func(c *Config) { c.FarMass.Dim = 15 }, []string{"far_mass.dim", "d=15", "even"}},
		{"odd concentration dim", func(c *Config) { c.Concentration.Dims = []int{16, 33} }, []string{"concentration.dims", "d=33"}},
		{"negative lambda", func(c *Config) { c.FarMass.Lambdas = []float64{-1} }, []string{"far_mass.lambdas", "lambda=-1"}},
		{"negative sigma", func(c *Config) { c.Incoherence.Sigma = -1 }, []string{"incoherence.sigma", "-1"}},
		{"negative alibi slope", func(c *Config) { c.FarMass.ALiBiSlopes = []float64{-0.5} }, []string{"far_mass.alibi_slopes"}},
		{"context too short", func(c *Config) { c.Mixing.Contexts = []int{32, 1024} }, []string{"mixing.contexts", "32", "max_route"}},
		{"threshold", func(c *Config) { c.Mixing.Threshold = 1.5 }, []string{"mixing.threshold", "1.5"}},
		{"alpha", func(c *Config) { c.Alpha = 0 }, []string{"alpha"}},
		{"unsorted far counts", func(c *Config) { c.Incoherence.FarCounts = []int{64, 16} }, []string{"incoherence.far_counts", "increasing"}},
		{"negative background", func(c *Config) { c.Incoherence.Background = -1 }, []string{"incoherence.background", "-1"}},
		{"path beta", func(c *Config) { c.Path.Betas = []float64{0.5, 2.5} }, []string{"path.betas", "beta=2.5", "(0, 2]"}},
		{"path samples", func(c *Config) { c.Path.Samples = 2 }, []string{"path.samples", "2"}},
		{"shrink as a family", func(c *Config) { c.Mixing.Families[0].Shrink = 64 }, []string{"mixing.families[0]", "shrink=64", "control"}},
	}
	for _, tc := range cases {
		c := SmokeConfig()
		tc.edit(&c)
		err := c.Validate()
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", tc.name, err, w)
			}
		}
	}
	// Run refuses a bad config before doing any work.
	c := SmokeConfig()
	c.FarMass.Near = []int{0}
	if _, err := Run(context.Background(), c, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "K=0") {
		t.Errorf("Run with K=0: %v", err)
	}
}

// A fixed rotation with drift (scale 0, drift 0.4: RoPE-like, every step
// the same rotation) is a law Validate accepts; without the drift the
// steps are the identity, which it refuses (the control: the same family
// minus its drift).
func TestValidateAcceptsFixedRotationWithDrift(t *testing.T) {
	cfg := SmokeConfig()
	cfg.Mixing.Families = append(cfg.Mixing.Families, StepFamily{Name: "fixed-0.4", Kind: "so2", Dim: 8, Angle: "gaussian", Drift: 0.4})
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a fixed rotation with drift refused: %v", err)
	}
	cfg.Mixing.Families[len(cfg.Mixing.Families)-1].Drift = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "identity") {
		t.Fatalf("scale 0 without drift (identity steps) accepted: %v", err)
	}
}

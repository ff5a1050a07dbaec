package theory

import (
	"errors"
	"fmt"
	"math"
)

// Config holds every sample size, dimension and seed of the four checks.
// Its zero value is not valid; start from SmokeConfig or CPUConfig.
type Config struct {
	Name    string  `json:"name"`  // profile name, recorded in the outputs
	Seed    uint64  `json:"seed"`  // root of every random stream
	Workers int     `json:"-"`     // goroutines; 0 means GOMAXPROCS. Never changes the outputs, so it is not recorded.
	Alpha   float64 `json:"alpha"` // family-wise error rate of each check's Monte Carlo tolerances

	Mixing        MixingConfig        `json:"mixing"`
	Concentration ConcentrationConfig `json:"concentration"`
	FarMass       FarMassConfig       `json:"far_mass"`
	Incoherence   IncoherenceConfig   `json:"incoherence"`
	Path          PathConfig          `json:"path"`
}

// StepFamily is one distribution of per-token steps M_t.
type StepFamily struct {
	Name string `json:"name"`
	// Kind is "so2" (block-diagonal rotations with i.i.d. angles per block),
	// "expskew" (exp(sigma/sqrt(d) * (G - G^T)/sqrt 2), G standard Gaussian),
	// "householder" (reflection I - 2 w w^T, w uniform on the sphere) or
	// "identity" (no mixing at all; a negative control).
	Kind  string  `json:"kind"`
	Dim   int     `json:"dim"`
	Angle string  `json:"angle,omitempty"` // so2 only: "gaussian" or "uniform"
	Scale float64 `json:"scale,omitempty"` // so2: angle sd or half-width; expskew: sigma
	Drift float64 `json:"drift,omitempty"` // so2 only: mean angle per token (RoPE-like drift)
	// Shrink, set only by the position-dependent control (controls.go), makes
	// the angle sd at token t Scale/sqrt(1 + t/Shrink).
	Shrink float64 `json:"shrink,omitempty"`
}

// MixingConfig sizes check 1.
type MixingConfig struct {
	Families    []StepFamily `json:"families"`
	Contexts    []int        `json:"contexts"`     // context lengths L in tokens
	Queries     int          `json:"queries"`      // independent queries per family and context
	MaxRoute    int          `json:"max_route"`    // route lengths n = 0..MaxRoute are measured
	Threshold   float64      `json:"threshold"`    // epsilon: the window ends when |corr| < epsilon
	StepSamples int          `json:"step_samples"` // single steps drawn to measure ||E[M]||_op
	Chunks      int          `json:"chunks"`       // tasks per family and context
}

// ConcentrationConfig sizes check 2.
type ConcentrationConfig struct {
	Dims       []int     `json:"dims"`         // head dimensions d (even)
	Samples    int       `json:"samples"`      // far routes per dimension and family
	FarFactor  float64   `json:"far_factor"`   // far route length = FarFactor * predicted window
	Threshold  float64   `json:"threshold"`    // epsilon of the predicted window
	SO2Sigma   float64   `json:"so2_sigma"`    // sd of the Gaussian SO(2) angles
	HaarMaxDim int       `json:"haar_max_dim"` // explicit Haar matrices (QR) are sampled for d <= this
	TailGrid   []float64 `json:"tail_grid"`    // values of s = d t^2 at which tails are compared
	Chunks     int       `json:"chunks"`
}

// FarMassConfig sizes check 3.
type FarMassConfig struct {
	Dim         int       `json:"dim"`
	Sigma       float64   `json:"sigma"`        // sd of the Gaussian SO(2) angles of the transport
	Near        []int     `json:"near"`         // K values
	Lambdas     []float64 `json:"lambdas"`      // logit bounds lambda
	FarCounts   []int     `json:"far_counts"`   // M_L values (increasing)
	ALiBiSlopes []float64 `json:"alibi_slopes"` // distance penalty per token
	Samples     int       `json:"samples"`      // simulated queries (each its own sequence)
	Chunks      int       `json:"chunks"`
}

// IncoherenceConfig sizes check 4.
type IncoherenceConfig struct {
	Dim        int     `json:"dim"`
	Sigma      float64 `json:"sigma"`      // sd of the Gaussian SO(2) angles
	Background float64 `json:"background"` // |b|, the common background shared by all far values
	Noise      float64 `json:"noise"`      // per-coordinate sd of the value noise
	Gap        int     `json:"gap"`        // the far set starts this many tokens before the query
	FarCounts  []int   `json:"far_counts"` // M values (increasing)
	Samples    int     `json:"samples"`
	Chunks     int     `json:"chunks"`
}

func defaultFamilies(so2Dim, matDim, hhDim int) []StepFamily {
	return []StepFamily{
		{Name: "so2-gauss-0.3", Kind: "so2", Dim: so2Dim, Angle: "gaussian", Scale: 0.3},
		{Name: "so2-gauss-0.6", Kind: "so2", Dim: so2Dim, Angle: "gaussian", Scale: 0.6},
		{Name: "so2-unif-1.0", Kind: "so2", Dim: so2Dim, Angle: "uniform", Scale: 1.0},
		{Name: "so2-drift-0.4", Kind: "so2", Dim: so2Dim, Angle: "gaussian", Scale: 0.4, Drift: 0.4},
		{Name: "expskew-0.5", Kind: "expskew", Dim: matDim, Scale: 0.5},
		{Name: "householder", Kind: "householder", Dim: hhDim},
	}
}

// SmokeConfig runs every check at tiny sizes, in seconds. Its verdicts are
// computed the same way but with little statistical power.
func SmokeConfig() Config {
	return Config{
		Name: "smoke", Seed: 1, Alpha: 0.01,
		Mixing: MixingConfig{
			Families: defaultFamilies(16, 6, 8),
			Contexts: []int{1024, 8192, 65536}, Queries: 256, MaxRoute: 96,
			Threshold: 0.2, StepSamples: 512, Chunks: 2,
		},
		Concentration: ConcentrationConfig{
			Dims: []int{16, 32}, Samples: 512, FarFactor: 2, Threshold: 0.05,
			SO2Sigma: 0.6, HaarMaxDim: 16, TailGrid: []float64{1, 2, 4, 6}, Chunks: 2,
		},
		FarMass: FarMassConfig{
			Dim: 16, Sigma: 0.6, Near: []int{1, 16}, Lambdas: []float64{1, 4},
			FarCounts: []int{16, 256, 4096}, ALiBiSlopes: []float64{0.5}, Samples: 8, Chunks: 2,
		},
		Incoherence: IncoherenceConfig{
			Dim: 16, Sigma: 0.5, Background: 1, Noise: 0.25, Gap: 16,
			FarCounts: []int{16, 256, 4096}, Samples: 64, Chunks: 2,
		},
		Path: PathConfig{Dim: 8, Betas: []float64{0.5, 1.2, 2}, Samples: 256, MaxRoute: 256, Chunks: 2},
	}
}

// CPUConfig is the profile the pipeline runs: a few minutes on 2 cores.
func CPUConfig() Config {
	return Config{
		Name: "cpu", Seed: 20260630, Alpha: 0.01,
		Mixing: MixingConfig{
			Families: defaultFamilies(64, 8, 16),
			Contexts: []int{1024, 8192, 65536}, Queries: 2048, MaxRoute: 160,
			Threshold: 0.1, StepSamples: 8192, Chunks: 4,
		},
		Concentration: ConcentrationConfig{
			Dims: []int{16, 32, 64, 128, 256}, Samples: 8192, FarFactor: 3, Threshold: 0.05,
			SO2Sigma: 0.6, HaarMaxDim: 32, TailGrid: []float64{0.5, 1, 2, 3, 4, 6, 8, 10}, Chunks: 8,
		},
		FarMass: FarMassConfig{
			Dim: 64, Sigma: 0.6, Near: []int{1, 16, 64}, Lambdas: []float64{1, 2, 4, 8},
			FarCounts:   []int{16, 64, 256, 1024, 4096, 16384, 65536},
			ALiBiSlopes: []float64{0.5, 0.0625}, Samples: 64, Chunks: 8,
		},
		Incoherence: IncoherenceConfig{
			Dim: 64, Sigma: 0.5, Background: 1, Noise: 0.125, Gap: 64,
			FarCounts: []int{16, 64, 256, 1024, 4096, 16384, 65536}, Samples: 96, Chunks: 8,
		},
		// d = 16 as the Householder mixing family; beta 1.2 is in the range
		// the trained path models measure (1.06-1.29).
		Path: PathConfig{Dim: 16, Betas: []float64{0.5, 1, 1.2, 1.5, 2}, Samples: 2048, MaxRoute: 1024, Chunks: 4},
	}
}

// Validate reports every bad parameter at once, each naming the field,
// the bad value and what to use instead.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("theory: config %s: %s", field, fmt.Sprintf(format, args...)))
	}
	if c.Workers < 0 {
		bad("workers", "%d is negative (use 0 for GOMAXPROCS)", c.Workers)
	}
	if !(c.Alpha > 0 && c.Alpha < 1) {
		bad("alpha", "%v is not in (0,1) (use 0.01)", c.Alpha)
	}
	positive := func(field string, v int) {
		if v <= 0 {
			bad(field, "%d must be positive", v)
		}
	}
	positiveF := func(field string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			bad(field, "%v must be a positive finite number", v)
		}
	}
	increasing := func(field string, v []int) {
		if len(v) == 0 {
			bad(field, "is empty")
		}
		for i, x := range v {
			if x <= 0 || (i > 0 && x <= v[i-1]) {
				bad(field, "%v must be positive and strictly increasing", v)
				return
			}
		}
	}
	threshold := func(field string, v float64) {
		if !(v > 0 && v < 1) {
			bad(field, "%v is not in (0,1) (use 0.05)", v)
		}
	}

	m := c.Mixing
	if len(m.Families) == 0 {
		bad("mixing.families", "is empty")
	}
	for i, f := range m.Families {
		if err := f.validate(); err != nil {
			errs = append(errs, fmt.Errorf("theory: config mixing.families[%d]: %w", i, err))
		}
	}
	increasing("mixing.contexts", m.Contexts)
	positive("mixing.queries", m.Queries)
	if m.Queries < 4 {
		bad("mixing.queries", "%d is too few for a standard error (use >= 4)", m.Queries)
	}
	positive("mixing.max_route", m.MaxRoute)
	if len(m.Contexts) > 0 && m.Contexts[0] <= m.MaxRoute {
		bad("mixing.contexts", "shortest context %d must exceed mixing.max_route %d", m.Contexts[0], m.MaxRoute)
	}
	threshold("mixing.threshold", m.Threshold)
	if m.StepSamples < 4 {
		bad("mixing.step_samples", "%d is too few (use >= 4)", m.StepSamples)
	}
	positive("mixing.chunks", m.Chunks)

	k := c.Concentration
	increasing("concentration.dims", k.Dims)
	for _, d := range k.Dims {
		if d%2 != 0 || d < 4 {
			bad("concentration.dims", "d=%d must be even and >= 4 (block SO(2) needs pairs)", d)
		}
	}
	positive("concentration.samples", k.Samples)
	if k.Samples < 16 {
		bad("concentration.samples", "%d is too few (use >= 16)", k.Samples)
	}
	positiveF("concentration.far_factor", k.FarFactor)
	threshold("concentration.threshold", k.Threshold)
	positiveF("concentration.so2_sigma", k.SO2Sigma)
	if k.HaarMaxDim < 0 {
		bad("concentration.haar_max_dim", "%d is negative (use 0 to skip explicit Haar matrices)", k.HaarMaxDim)
	}
	if len(k.TailGrid) == 0 {
		bad("concentration.tail_grid", "is empty")
	}
	for _, s := range k.TailGrid {
		positiveF("concentration.tail_grid", s)
	}
	positive("concentration.chunks", k.Chunks)

	f := c.FarMass
	evenDim("far_mass.dim", f.Dim, bad)
	positiveF("far_mass.sigma", f.Sigma)
	for _, k := range f.Near {
		if k <= 0 {
			bad("far_mass.near", "K=%d leaves no near sources, so the bound M/(M + K e^{2 lambda}) is trivially 1 (use K >= 1)", k)
		}
	}
	increasing("far_mass.near", f.Near)
	if len(f.Lambdas) == 0 {
		bad("far_mass.lambdas", "is empty")
	}
	for _, l := range f.Lambdas {
		if !(l >= 0) || math.IsInf(l, 0) || l > 50 {
			bad("far_mass.lambdas", "lambda=%v must be in [0, 50]", l)
		}
	}
	increasing("far_mass.far_counts", f.FarCounts)
	for _, s := range f.ALiBiSlopes {
		positiveF("far_mass.alibi_slopes", s)
	}
	positive("far_mass.samples", f.Samples)
	positive("far_mass.chunks", f.Chunks)

	v := c.Incoherence
	evenDim("incoherence.dim", v.Dim, bad)
	positiveF("incoherence.sigma", v.Sigma)
	if !(v.Background >= 0) || math.IsInf(v.Background, 0) {
		bad("incoherence.background", "%v must be >= 0 (0 is the control the stage runs itself)", v.Background)
	}
	if !(v.Noise >= 0) || math.IsInf(v.Noise, 0) {
		bad("incoherence.noise", "%v must be >= 0", v.Noise)
	}
	if v.Gap < 0 {
		bad("incoherence.gap", "%d is negative", v.Gap)
	}
	increasing("incoherence.far_counts", v.FarCounts)
	if v.Samples < 4 {
		bad("incoherence.samples", "%d is too few for a standard error (use >= 4)", v.Samples)
	}
	positive("incoherence.chunks", v.Chunks)

	pc := c.Path
	if pc.Dim < 2 {
		bad("path.dim", "%d must be >= 2", pc.Dim)
	}
	if len(pc.Betas) == 0 {
		bad("path.betas", "is empty (use 0.5, 1, 1.2, 1.5, 2)")
	}
	for _, b := range pc.Betas {
		if !(b > 0 && b <= 2) {
			bad("path.betas", "beta=%v is not in (0, 2] (PaTH's steps I - beta w w^T)", b)
		}
	}
	if pc.Samples < 4 {
		bad("path.samples", "%d is too few for a standard error (use >= 4)", pc.Samples)
	}
	positive("path.max_route", pc.MaxRoute)
	positive("path.chunks", pc.Chunks)
	return errors.Join(errs...)
}

func evenDim(field string, d int, bad func(string, string, ...any)) {
	if d < 2 || d%2 != 0 {
		bad(field, "d=%d must be even and >= 2 (block SO(2) rotates pairs of coordinates)", d)
	}
}

func (f StepFamily) validate() error {
	if f.Name == "" {
		return errors.New("name is empty")
	}
	switch f.Kind {
	case "so2":
		if f.Dim < 2 || f.Dim%2 != 0 {
			return fmt.Errorf("family %q: dim=%d must be even and >= 2 for block SO(2) steps", f.Name, f.Dim)
		}
		if f.Angle != "gaussian" && f.Angle != "uniform" {
			return fmt.Errorf("family %q: angle %q is unknown (use \"gaussian\" or \"uniform\")", f.Name, f.Angle)
		}
	case "expskew", "householder", "identity":
		if f.Dim < 2 {
			return fmt.Errorf("family %q: dim=%d must be >= 2", f.Name, f.Dim)
		}
		if f.Angle != "" || f.Drift != 0 {
			return fmt.Errorf("family %q: angle/drift apply only to kind \"so2\"", f.Name)
		}
	default:
		return fmt.Errorf("family %q: kind %q is unknown (use so2, expskew, householder or identity)", f.Name, f.Kind)
	}
	if f.Scale < 0 || math.IsNaN(f.Scale) || math.IsInf(f.Scale, 0) {
		return fmt.Errorf("family %q: scale=%v is negative or not finite (use a positive angle scale)", f.Name, f.Scale)
	}
	// scale 0 is identity steps, unless an SO(2) law has a drift: then it
	// is a fixed rotation (RoPE-like), a law the check must be able to run.
	if (f.Kind == "so2" && f.Drift == 0 || f.Kind == "expskew") && f.Scale == 0 {
		return fmt.Errorf("family %q: scale=0 gives identity steps; use kind \"identity\" for that control (or a drift for a fixed rotation)", f.Name)
	}
	if f.Shrink != 0 {
		return fmt.Errorf("family %q: shrink=%v: a position-dependent law is the stage's own control, not a family (remove shrink)", f.Name, f.Shrink)
	}
	if math.IsNaN(f.Drift) || math.IsInf(f.Drift, 0) {
		return fmt.Errorf("family %q: drift=%v is not finite", f.Name, f.Drift)
	}
	return nil
}

package theory

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"routebench/artifacts"
)

// SummaryFile is the stage's machine-readable result: Summary as JSON.
const SummaryFile = "theory.json"

// Summary is everything the stage found; SummaryFile is its JSON encoding.
type Summary struct {
	Profile string         `json:"profile"`
	Seed    uint64         `json:"seed"`
	Pass    bool           `json:"pass"`
	Checks  []CheckSummary `json:"checks"`
	Files   []string       `json:"files"` // everything Run wrote, theory.json included

	Mixing        *MixingResult        `json:"mixing"`
	Concentration *ConcentrationResult `json:"concentration"`
	FarMass       *FarMassResult       `json:"far_mass"`
	Incoherence   *IncoherenceResult   `json:"incoherence"`
	Path          *PathResult          `json:"path"`
	Config        Config               `json:"config"`
}

// CheckSummary is one check's verdict with the criteria that decided it.
// The verdict counts the empirical criteria (Criteria, the evidence), and
// requires the identities (unit tests of the code) to hold and every control
// to fail as it must.
type CheckSummary struct {
	Name       string      `json:"name"`
	Title      string      `json:"title"`
	Verdict    string      `json:"verdict"` // PASS or FAIL
	Pass       bool        `json:"pass"`
	Samples    string      `json:"samples"`
	Criteria   []Criterion `json:"criteria"`   // empirical only
	Identities []Criterion `json:"identities"` // true by construction: not evidence
	Controls   []Control   `json:"controls"`
	Empirical  int         `json:"empirical"`        // how many empirical criteria
	Passed     int         `json:"empirical_passed"` // how many of them passed
	Plots      []string    `json:"plots"`
}

// Run executes all checks and writes into outDir: theory.json, theory.md and
// the PNG plots. progress, if not nil, is called after every task (from one
// goroutine at a time). A FAIL verdict is a result, not an error: err is
// non-nil only when the stage could not run (bad config, cancelled, I/O).
func Run(ctx context.Context, cfg Config, outDir string, progress func(done, total int64, note string)) (*Summary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if outDir == "" {
		return nil, fmt.Errorf("theory: output directory is empty (pass the stage's artifact directory)")
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("theory: create output directory: %w", err)
	}
	mix := planMixing(cfg)
	conc := planConcentration(cfg)
	far := planFarMass(cfg)
	inco := planIncoherence(cfg)
	path := planPath(cfg)
	// Longest jobs first so that the last ones to finish are short.
	var jobs []job
	jobs = append(jobs, far.jobs...)
	jobs = append(jobs, inco.jobs...)
	jobs = append(jobs, mix.jobs...)
	jobs = append(jobs, conc.jobs...)
	jobs = append(jobs, path.jobs...)
	if err := runJobs(ctx, cfg.Workers, jobs, progress); err != nil {
		return nil, err
	}
	sum := &Summary{Profile: cfg.Name, Seed: cfg.Seed, Config: cfg}
	sum.Mixing = mix.finish()
	sum.Concentration = conc.finish()
	fm, err := far.finish()
	if err != nil {
		return nil, err
	}
	sum.FarMass = fm
	sum.Incoherence = inco.finish()
	sum.Path = path.finish()
	sum.Checks = checkSummaries(cfg, sum)
	sum.Pass = true
	for _, c := range sum.Checks {
		sum.Pass = sum.Pass && c.Pass
	}

	files := map[string][]byte{}
	for _, f := range []func() (map[string][]byte, error){
		func() (map[string][]byte, error) { return plotMixing(sum.Mixing) },
		func() (map[string][]byte, error) { return plotConcentration(sum.Concentration) },
		func() (map[string][]byte, error) { return plotFarMass(sum.FarMass) },
		func() (map[string][]byte, error) { return plotIncoherence(sum.Incoherence) },
	} {
		m, err := f()
		if err != nil {
			return nil, fmt.Errorf("theory: plot: %w", err)
		}
		for k, v := range m {
			files[k] = v
		}
	}
	files["theory.md"] = []byte(markdown(sum))
	for name := range files {
		sum.Files = append(sum.Files, name)
	}
	sum.Files = append(sum.Files, SummaryFile)
	sort.Strings(sum.Files)
	js, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("theory: encode theory.json: %w", err)
	}
	files[SummaryFile] = append(js, '\n')
	for _, name := range sum.Files {
		if err := writeAtomic(filepath.Join(outDir, name), files[name]); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// writeAtomic writes through the store's atomic write, so that a killed
// run never leaves a truncated artifact under its final name.
func writeAtomic(path string, data []byte) error {
	if err := artifacts.WriteFileAtomic(path, data, 0o644); err != nil { // 0644: artifacts are shared
		return fmt.Errorf("theory: write %s: %w", path, err)
	}
	return nil
}

func checkSummaries(cfg Config, s *Summary) []CheckSummary {
	mc, kc, fc, ic, pc := cfg.Mixing, cfg.Concentration, cfg.FarMass, cfg.Incoherence, cfg.Path
	mk := func(name, title, samples string, list []Criterion, controls []Control, plots ...string) CheckSummary {
		emp, id := splitKinds(list)
		c := CheckSummary{Name: name, Title: title, Samples: samples, Criteria: emp, Identities: id, Controls: controls, Plots: plots, Empirical: len(emp)}
		c.Pass = len(emp) > 0 && controlsFailed(controls)
		for _, x := range emp {
			if x.Pass {
				c.Passed++
			}
			c.Pass = c.Pass && x.Pass
		}
		for _, x := range id {
			c.Pass = c.Pass && x.Pass
		}
		c.Verdict = verdict(c.Pass)
		return c
	}
	// Mixing: the per-family criteria, prefixed by the family.
	var mixList []Criterion
	for _, f := range s.Mixing.Families {
		for _, c := range f.Criteria {
			c.Name = f.Family.Name + ": " + c.Name
			mixList = append(mixList, c)
		}
	}
	return []CheckSummary{
		mk("mixing", "Mixing window (spectral gap)",
			fmt.Sprintf("%d families x %d contexts x %d independent queries, route lengths 0..%d; %d single steps per family",
				len(mc.Families), len(mc.Contexts), mc.Queries, mc.MaxRoute, mc.StepSamples),
			mixList, s.Mixing.Controls, "mixing_contexts.png", "mixing_opnorm.png"),
		mk("concentration", "Score gap / concentration",
			fmt.Sprintf("%d far routes per dimension and family, d in %v", kc.Samples, kc.Dims),
			s.Concentration.Criteria, s.Concentration.Controls, "concentration_tails.png"),
		mk("farmass", "Far mass: transport lowers it, and it still tends to 1",
			fmt.Sprintf("%d queries (d=%d), K in %v, lambda in %v, M up to %d", fc.Samples, fc.Dim, fc.Near, fc.Lambdas, fc.FarCounts[len(fc.FarCounts)-1]),
			s.FarMass.Criteria, s.FarMass.Controls, "farmass.png"),
		mk("incoherence", "Value-side incoherence (SO(2), Householder beside it)",
			fmt.Sprintf("%d samples (d=%d), M up to %d far values", ic.Samples, ic.Dim, ic.FarCounts[len(ic.FarCounts)-1]),
			s.Incoherence.Criteria, s.Incoherence.Controls, "incoherence.png"),
		mk("path", "PaTH's steps I - beta w w^T: contraction or decorrelation",
			fmt.Sprintf("%d routes per beta (d=%d), beta in %v, route lengths up to %d", pc.Samples, pc.Dim, pc.Betas, pc.MaxRoute),
			s.Path.Criteria, s.Path.Controls),
	}
}

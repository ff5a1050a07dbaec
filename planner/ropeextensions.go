package planner

import (
	"fmt"
	"slices"

	"routebench/modelspec/ropescale"
	"routebench/pipeline"
	"routebench/stages/evaluate"
	"routebench/stages/report"
)

// RoPE extended at inference (Profile.RopeExtensions; claim v3x): the
// trained rope weights evaluated with PI, NTK or YaRN, no retraining.

// extensionVariant is the run's variant name in stage names and the
// report: rope+<method>.
func extensionVariant(method string) string { return "rope+" + method }

// ExtensionMultipliers are the lengths an extension is evaluated at: T,
// 16T and the longest, those of them the profile evaluates (cpu: 1, 16,
// 128; the claim reads 16T and 128T). Each is a pass of its own (s
// depends on L), so the lengths between are left out for their cost.
func ExtensionMultipliers(profile []int) []int {
	longest := slices.Max(profile)
	var out []int
	for _, m := range profile {
		if m == 1 || m == 16 || m == longest {
			out = append(out, m)
		}
	}
	return out
}

func (p Profile) validateRopeExtensions() error {
	for i, m := range p.RopeExtensions {
		if !slices.Contains(ropescale.Methods, m) {
			return fmt.Errorf("profile %s: rope_extensions: %q is not one of %v", p.Name, m, ropescale.Methods)
		}
		if slices.Contains(p.RopeExtensions[:i], m) {
			return fmt.Errorf("profile %s: rope_extensions %v names %s twice; list each method once", p.Name, p.RopeExtensions, m)
		}
	}
	return nil
}

// extensionRun is one extension stage and its run name (report.RunName).
type extensionRun struct {
	run   string
	stage *pipeline.Stage
}

// extensionStages are the evaluate/rope+<method> stages of the rope runs
// (each reads its seed's train/rope, with rope's evaluation config but for
// the lengths, the method and no further protocols), and the report's
// variant names, in Profile.RopeExtensions' order. The first method runs
// at every rope seed, the rest at the first seed and their variant_seeds.
func extensionStages(p Profile, runs []runStages, tok *pipeline.Stage, firstSeed uint64) ([]extensionRun, []string, error) {
	var stages []extensionRun
	var variants []string
	for k, method := range p.RopeExtensions {
		name := extensionVariant(method)
		for _, r := range runs {
			if r.variant != "rope" || (k > 0 && r.seed != firstSeed && !slices.Contains(p.VariantSeeds[name], r.seed)) {
				continue
			}
			cfg, ok := r.eval.Config.(evaluate.Config)
			if !ok {
				return nil, nil, fmt.Errorf("profile %s: %s's config is a %T, not an evaluate.Config", p.Name, r.eval.Name, r.eval.Config)
			}
			cfg.Multipliers, cfg.RopeScaling, cfg.Protocols = ExtensionMultipliers(cfg.Multipliers), method, nil
			if err := cfg.Validate(); err != nil {
				return nil, nil, fmt.Errorf("profile %s: %w", p.Name, err)
			}
			st := evaluate.Stage(cfg, tok, r.train)
			st.Name += report.SeedSuffix(r.seed, p.Train.Seed)
			stages = append(stages, extensionRun{run: report.RunName(name, r.seed, p.Train.Seed), stage: st})
		}
		if len(stages) > 0 && !slices.Contains(variants, name) {
			variants = append(variants, name)
		}
	}
	return stages, variants, nil
}

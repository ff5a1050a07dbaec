package theory

import (
	"fmt"

	"routebench/pipeline"
)

// Kind is the pipeline stage kind and name.
const Kind = "theory"

// Stage returns the theory stage for a named sample-size configuration
// ("smoke" or "cpu"). It has no inputs: the checks depend only on their
// config and seeds, so the artifact is deterministic.
func Stage(name string) (*pipeline.Stage, error) {
	var cfg Config
	switch name {
	case "smoke":
		cfg = SmokeConfig()
	case "cpu":
		cfg = CPUConfig()
	default:
		return nil, fmt.Errorf("theory: unknown configuration %q (want smoke or cpu)", name)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &pipeline.Stage{
		Name: Kind, Kind: Kind, Config: cfg,
		Code: []string{"routebench/stages/theory"},
		Run: func(rc *pipeline.RunContext) error {
			_, err := Run(rc.Context, cfg, rc.OutDir, rc.Progress)
			return err
		},
	}, nil
}

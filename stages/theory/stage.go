package theory

import "routebench/pipeline"

// Kind is the pipeline stage kind and name.
const Kind = "theory"

// Stage returns the theory stage of a configuration (a profile's; see
// SmokeConfig and CPUConfig). It has no inputs: the checks depend only on their
// config and seeds, so the artifact is deterministic.
func Stage(cfg Config) (*pipeline.Stage, error) {
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

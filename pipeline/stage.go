package pipeline

import (
	"context"
	"fmt"

	"routebench/artifacts"
)

// Stage is one node of the DAG.
type Stage struct {
	// Name is unique in a plan ("train/rope"); Kind groups stages of one
	// implementation ("train") for --force and the CLI.
	Name, Kind string
	// KeyName, when set, is the name hashed into the key instead of Name.
	// A sweep names each point's stages apart ("sigma_min=0.2/train/rope")
	// while each is the very stage the point's profile calls "train/rope":
	// hashing that name gives it that stage's key, so an identical point
	// and a plain run of its profile share one artifact.
	KeyName string
	// Config must hold every knob that can change the output. It is hashed
	// as canonical JSON, so it must be JSON-encodable and deterministic
	// (structs and maps; no funcs or channels).
	Config any
	// Inputs are the stages whose artifacts this one reads.
	Inputs []Input
	// Code lists the import paths of the packages that implement the stage;
	// their source, and that of every routebench package they import, is the
	// code salt (see salt.go).
	Code []string
	// Volatile names output files that legitimately differ between runs
	// (timings). Verify mode does not compare them, and they are kept out of
	// the digest downstream stages hash.
	Volatile []string
	// Run computes the outputs into rc.OutDir.
	Run func(rc *RunContext) error
}

// Input is a named dependency on another stage's artifact.
type Input struct {
	Name  string
	Stage *Stage
}

// RunContext is what a running stage may touch.
type RunContext struct {
	Context context.Context
	Stage   *Stage
	// Inputs maps each declared input name to its verified artifact.
	Inputs map[string]*artifacts.Artifact
	// OutDir receives the stage's outputs; it is committed to the store
	// only if Run returns nil.
	OutDir string
	// WorkDir persists across an interrupted run (checkpoints) and is
	// removed after a successful commit.
	WorkDir string
	// Logf writes a log line prefixed with the stage name.
	Logf func(format string, args ...any)
	// Progress reports work done; safe to call often.
	Progress func(done, total int64, note string)
	// Measured is Progress with a training step's figures, which the
	// stream log writes as fields of their own (nil outside a Runner:
	// call Progress then).
	Measured func(done, total int64, note string, f Figures)
}

// Input returns a declared input's artifact or an error naming the stage.
func (rc *RunContext) Input(name string) (*artifacts.Artifact, error) {
	a, ok := rc.Inputs[name]
	if !ok {
		return nil, fmt.Errorf("stage %s: no input %q declared", rc.Stage.Name, name)
	}
	return a, nil
}

// Plan is an ordered DAG for one profile: every stage after its inputs.
type Plan struct {
	Profile string
	Stages  []*Stage
}

// NewPlan orders stages so that inputs come first, checking names are
// unique and every input is in the plan.
func NewPlan(profile string, stages []*Stage) (*Plan, error) {
	byName := map[string]*Stage{}
	for _, s := range stages {
		if s.Name == "" || s.Run == nil {
			return nil, fmt.Errorf("plan %s: stage %q has no name or no Run", profile, s.Name)
		}
		if _, dup := byName[s.Name]; dup {
			return nil, fmt.Errorf("plan %s: stage %q appears twice", profile, s.Name)
		}
		byName[s.Name] = s
	}
	var order []*Stage
	state := map[*Stage]int{} // 1 visiting, 2 done
	var visit func(s *Stage) error
	visit = func(s *Stage) error {
		switch state[s] {
		case 1:
			return fmt.Errorf("plan %s: stage %s depends on itself", profile, s.Name)
		case 2:
			return nil
		}
		state[s] = 1
		for _, in := range s.Inputs {
			if byName[in.Stage.Name] != in.Stage {
				return fmt.Errorf("plan %s: stage %s reads %s, which is not in the plan", profile, s.Name, in.Stage.Name)
			}
			if err := visit(in.Stage); err != nil {
				return err
			}
		}
		state[s] = 2
		order = append(order, s)
		return nil
	}
	for _, s := range stages {
		if err := visit(s); err != nil {
			return nil, err
		}
	}
	return &Plan{Profile: profile, Stages: order}, nil
}

// Stage returns the named stage.
func (p *Plan) Stage(name string) (*Stage, bool) {
	for _, s := range p.Stages {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// Closure returns the named stages and everything they depend on, in plan order.
func (p *Plan) Closure(names ...string) (*Plan, error) {
	need := map[*Stage]bool{}
	var mark func(s *Stage)
	mark = func(s *Stage) {
		if need[s] {
			return
		}
		need[s] = true
		for _, in := range s.Inputs {
			mark(in.Stage)
		}
	}
	for _, n := range names {
		found := false
		for _, s := range p.Stages {
			if s.Name == n || s.Kind == n {
				mark(s)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown stage %q in profile %s (stages: %s)", n, p.Profile, p.names())
		}
	}
	out := &Plan{Profile: p.Profile}
	for _, s := range p.Stages {
		if need[s] {
			out.Stages = append(out.Stages, s)
		}
	}
	return out, nil
}

func (p *Plan) names() string {
	var b []byte
	for i, s := range p.Stages {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, s.Name...)
	}
	return string(b)
}

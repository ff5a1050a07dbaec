package pipeline

import "routebench/artifacts"

// StatusLine says whether a stage is cached and, if not, why it would run
// (DVC-style "status").
type StatusLine struct {
	Stage  string
	Key    string // empty when an input must run first
	Cached bool
	Reason string
}

// Status computes what a Run would do without running anything. It also
// returns the cached artifacts found, by stage name.
func (r *Runner) Status(plan *Plan) ([]StatusLine, map[string]*artifacts.Artifact, error) {
	done := map[string]*artifacts.Artifact{}
	lines, err := r.eachStage(plan, done, func(s *Stage, key Key, line *StatusLine) error {
		art, err := r.Store.Get(key.ID)
		switch {
		case err == nil && r.forced(s):
			line.Reason = "forced"
			done[s.Name] = art
		case err == nil:
			line.Cached = true
			done[s.Name] = art
		case artifacts.IsMiss(err):
			line.Reason = err.(*artifacts.Miss).Reason
		default:
			return err
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return lines, done, nil
}

// eachStage walks plan in order: a stage with an input not in done reads
// "input X will run first"; for every other, find is given its key and
// fills in its line (Cached, Reason) and done, which later stages' keys
// read. Status looks every stage up; Watch.Poll only those it must.
func (r *Runner) eachStage(plan *Plan, done map[string]*artifacts.Artifact, find func(s *Stage, key Key, line *StatusLine) error) ([]StatusLine, error) {
	var lines []StatusLine
	for _, s := range plan.Stages {
		line := StatusLine{Stage: s.Name}
		var pending string
		for _, in := range s.Inputs {
			if done[in.Stage.Name] == nil {
				pending = in.Stage.Name
				break
			}
		}
		if pending != "" {
			line.Reason = "input " + pending + " will run first"
			lines = append(lines, line)
			continue
		}
		key, err := r.stageKey(s, done)
		if err != nil {
			return nil, err
		}
		line.Key = key.ID.String()
		if err := find(s, key, &line); err != nil {
			return nil, err
		}
		lines = append(lines, line)
	}
	return lines, nil
}

// LiveKeys is the set of action IDs the plans would use now: what gc keeps.
func (r *Runner) LiveKeys(plans ...*Plan) (map[artifacts.ActionID]bool, error) {
	live := map[artifacts.ActionID]bool{}
	for _, p := range plans {
		lines, _, err := r.Status(p)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			if l.Key != "" {
				id, err := artifacts.ParseActionID(l.Key)
				if err != nil {
					return nil, err
				}
				live[id] = true
			}
		}
	}
	return live, nil
}

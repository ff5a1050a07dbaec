package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"routebench/pipeline"
	"routebench/stages/kernelspeed"
	"routebench/stages/report"
	"routebench/stages/stepspeed"
	"routebench/stages/study"
	"routebench/stages/theory"
)

// A sweep file: a base profile, overrides, and axes of --set keys with
// values; its points are the cartesian product of the axes. Each point is
// the profile those overrides make, built by Build, so its stages are a
// plain run's, with its keys: a point a profile run already trained is a
// cache hit. The sweep keeps each point's tokenize, train and evaluate
// stages (one stage where points share it) and adds the study stage.
type Sweep struct {
	// Name names the study file (STUDY-<name>.md); default: the file's
	// base name without .json.
	Name    string          `json:"name"`
	Profile string          `json:"profile"` // the base profile
	Config  json.RawMessage `json:"config"`  // fields, as a --config file holds them; optional
	Set     []string        `json:"set"`     // --set assignments, after config; optional
	Axes    []SweepAxis     `json:"axes"`
}

// SweepAxis is one axis: a --set key and its values. With sets further
// keys along with it, each a list as long as Values (point i sets Key to
// Values[i] and every With key to its i-th value), e.g. heads and d_hidden
// scaled with d_model.
type SweepAxis struct {
	Key    string                       `json:"key"`
	Values []json.RawMessage            `json:"values"`
	With   map[string][]json.RawMessage `json:"with"`
}

const sweepFields = `fields: name, profile, config, set, axes; an axis: key, values, with`

var sweepName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// LoadSweep reads and checks a sweep file: every error is one line naming
// the file, the axis or the point, and the fix.
func LoadSweep(file string) (*Sweep, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var sw Sweep
	if err := dec.Decode(&sw); err != nil {
		return nil, fmt.Errorf("sweep %s is malformed: %v (%s)", file, err, sweepFields)
	}
	if sw.Name == "" {
		sw.Name = strings.TrimSuffix(filepath.Base(file), ".json")
	}
	if len(sw.Config) > 0 { // one line in errors and in the study's config
		var buf bytes.Buffer
		if err := json.Compact(&buf, sw.Config); err != nil {
			return nil, fmt.Errorf("sweep %s: config: %w", file, err)
		}
		sw.Config = buf.Bytes()
	}
	if err := sw.check(); err != nil {
		return nil, fmt.Errorf("sweep %s: %w", file, err)
	}
	return &sw, nil
}

func (sw *Sweep) check() error {
	if !sweepName.MatchString(sw.Name) {
		return fmt.Errorf("name %q: use letters, digits, '.', '_' and '-' (it names STUDY-<name>.md and the stages' run log)", sw.Name)
	}
	if sw.Profile == "" {
		return fmt.Errorf("no profile: name the base profile, e.g. \"profile\": \"cpu\" (one of: %s)", strings.Join(ProfileNames(), ", "))
	}
	if len(sw.Axes) == 0 {
		return fmt.Errorf("no axes: give at least one, e.g. \"axes\": [{\"key\": \"sigma_min\", \"values\": [0.1, 0.2]}]")
	}
	seen := map[string]bool{}
	for i, ax := range sw.Axes {
		keys := append([]string{ax.Key}, sortedKeys(ax.With)...)
		for _, k := range keys {
			if k == "" {
				return fmt.Errorf("axis %d has no key: name a --set key, e.g. \"key\": \"sigma_min\"", i+1)
			}
			path, _, err := resolveSetKey(k)
			if err != nil {
				return fmt.Errorf("axis %d: %w", i+1, err)
			}
			if seen[path] {
				return fmt.Errorf("axis %d sets %s, which another axis sets too; give each key one axis", i+1, path)
			}
			seen[path] = true
		}
		if len(ax.Values) == 0 {
			return fmt.Errorf("axis %s has no values: list at least one, e.g. \"values\": [0.1, 0.2]", ax.Key)
		}
		for _, k := range sortedKeys(ax.With) {
			if len(ax.With[k]) != len(ax.Values) {
				return fmt.Errorf("axis %s: with %s has %d values for the axis's %d; give one per axis value", ax.Key, k, len(ax.With[k]), len(ax.Values))
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sweepPoint is one point of the cartesian product.
type sweepPoint struct {
	label  string   // "sigma_min=0.2,steps=400"
	index  []int    // the value's index on each axis
	assign []string // key=value of each axis (and its with keys)
	labels []string // key=value of each axis's own key, for stage names
}

// valueText is a value as JSON text, compact; a string without its quotes.
func valueText(v json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return string(v)
	}
	var s string
	if json.Unmarshal(buf.Bytes(), &s) == nil {
		return s
	}
	return buf.String()
}

// points is the cartesian product of the axes, the first axis slowest.
func (sw *Sweep) points() []sweepPoint {
	pts := []sweepPoint{{}}
	for _, ax := range sw.Axes {
		var next []sweepPoint
		for _, p := range pts {
			for i, v := range ax.Values {
				q := sweepPoint{index: append(slices.Clone(p.index), i), assign: slices.Clone(p.assign), labels: slices.Clone(p.labels)}
				q.assign = append(q.assign, ax.Key+"="+valueText(v))
				for _, k := range sortedKeys(ax.With) {
					q.assign = append(q.assign, k+"="+valueText(ax.With[k][i]))
				}
				q.labels = append(q.labels, ax.Key+"="+valueText(v))
				next = append(next, q)
			}
		}
		pts = next
	}
	for i := range pts {
		pts[i].label = strings.Join(pts[i].labels, ",")
	}
	return pts
}

// pointProfile is the profile of one point: the base with the sweep's
// config, its set and the point's assignments, in that order.
func (sw *Sweep) pointProfile(p sweepPoint) (Profile, error) {
	prof, err := LoadProfileWith(sw.Profile, Overrides{Patch: sw.Config, Set: append(slices.Clone(sw.Set), p.assign...)})
	if err != nil {
		return Profile{}, fmt.Errorf("sweep %s: point %s: %w", sw.Name, p.label, err)
	}
	return prof, nil
}

// PlanName is the plan's name for a sweep (its run logs carry it).
func (sw *Sweep) PlanName() string { return "sweep-" + sw.Name }

// skippedKinds are the kinds a sweep leaves out of each point's plan: the
// theory and kernelspeed stages do not depend on what a sweep varies, the step
// timings (stepspeed) would time every point's shape again, and each
// point's report would be a RESULTS.md per point; the study replaces them.
var skippedKinds = map[string]bool{report.Kind: true, theory.Kind: true, kernelspeed.Kind: true, stepspeed.Kind: true}

// BuildSweep assembles a sweep's plan: each point's stages (but the
// skipped kinds), one stage where points share it, and the study stage.
//
// A stage every point shares keeps its profile name ("tokenize"); any
// other is prefixed with the axis values its points have in common
// ("sigma_min=0.2/train/rope@seed2") and keeps its profile name as its
// KeyName, so its key is the plain profile's.
func BuildSweep(sw *Sweep) (*pipeline.Plan, error) {
	pts := sw.points()
	type canon struct {
		stage   *pipeline.Stage // a copy, inputs remapped to canonical stages
		profile string          // its name in the profile's plan
		id      int             // its index in canons
		points  []int
	}
	var canons []*canon
	bySig := map[string]*canon{}
	label, err := commit()
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", sw.Name, err)
	}
	scfg := study.Config{Name: sw.Name, Profile: sw.Profile, Config: sw.Config, Set: sw.Set, Commit: label}
	for _, ax := range sw.Axes {
		a := study.Axis{Key: ax.Key, With: sortedKeys(ax.With)}
		for _, v := range ax.Values {
			a.Values = append(a.Values, valueText(v))
		}
		scfg.Axes = append(scfg.Axes, a)
	}
	studyIn := study.Inputs{}
	runCanon := map[string]*canon{} // study input name -> canonical stage
	for i, pt := range pts {
		prof, err := sw.pointProfile(pt)
		if err != nil {
			return nil, err
		}
		plan, runs, err := build(prof)
		if err != nil {
			return nil, fmt.Errorf("sweep %s: point %s: %w", sw.Name, pt.label, err)
		}
		seeds := make([]uint64, 0)
		for _, r := range runs {
			if !slices.Contains(seeds, r.seed) {
				seeds = append(seeds, r.seed)
			}
		}
		if i == 0 {
			scfg.Seeds = seeds
		} else if !slices.Equal(seeds, scfg.Seeds) {
			return nil, fmt.Errorf("sweep %s: point %s trains seeds %v, point %s %v; every point needs the same seeds (do not sweep seeds or train.seed)", sw.Name, pt.label, seeds, pts[0].label, scfg.Seeds)
		}
		mine := map[*pipeline.Stage]*canon{}
		for _, s := range plan.Stages { // inputs first
			if skippedKinds[s.Kind] {
				continue
			}
			c := *s
			c.Inputs = nil
			sig := []string{s.Name, s.Kind, strings.Join(s.Code, " ")}
			for _, in := range s.Inputs {
				ic := mine[in.Stage]
				c.Inputs = append(c.Inputs, pipeline.Input{Name: in.Name, Stage: ic.stage})
				sig = append(sig, fmt.Sprintf("input %s %d", in.Name, ic.id))
			}
			cfgJSON, err := pipeline.CanonicalConfig(s.Config)
			if err != nil {
				return nil, fmt.Errorf("sweep %s: point %s: stage %s: %w", sw.Name, pt.label, s.Name, err)
			}
			sig = append(sig, string(cfgJSON))
			key := strings.Join(sig, "\n")
			cn, ok := bySig[key]
			if !ok {
				cn = &canon{stage: &c, profile: s.Name, id: len(canons)}
				bySig[key] = cn
				canons = append(canons, cn)
			}
			cn.points = append(cn.points, i)
			mine[s] = cn
		}
		sp := study.Point{Label: pt.label, Values: pt.index}
		for _, r := range runs {
			sr := study.Run{Variant: r.variant, Seed: r.seed,
				Train: pt.label + "/train/" + r.name, Evaluate: pt.label + "/evaluate/" + r.name}
			runCanon[sr.Train], runCanon[sr.Evaluate] = mine[r.train], mine[r.eval]
			sp.Runs = append(sp.Runs, sr)
		}
		scfg.Points = append(scfg.Points, sp)
	}
	// Names: what the points sharing a stage have in common.
	names := map[string]bool{}
	for _, cn := range canons {
		if len(cn.points) < len(pts) {
			var common []string
			for a := range sw.Axes {
				v := pts[cn.points[0]].index[a]
				same := true
				for _, i := range cn.points {
					same = same && pts[i].index[a] == v
				}
				if same {
					common = append(common, pts[cn.points[0]].labels[a])
				}
			}
			prefix := strings.Join(common, ",")
			if prefix == "" || names[prefix+"/"+cn.profile] {
				prefix = pts[cn.points[0]].label // a rare sharing pattern: its first point's label is unique
			}
			cn.stage.Name, cn.stage.KeyName = prefix+"/"+cn.profile, cn.profile
		}
		names[cn.stage.Name] = true
	}
	all := make([]*pipeline.Stage, 0, len(canons)+1)
	for _, cn := range canons {
		all = append(all, cn.stage)
	}
	for name, cn := range runCanon {
		studyIn[name] = cn.stage
	}
	st, err := study.Stage(scfg, studyIn)
	if err != nil {
		return nil, err
	}
	return pipeline.NewPlan(sw.PlanName(), append(all, st))
}

package planner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"routebench/modelspec"
	"routebench/pipeline"
	"routebench/stages/evaluate"
	"routebench/stages/study"
)

// writeSweep writes a sweep file; the tiny corpus's path replaces CORPUS
// in text.
func writeSweep(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "s.json")
	if err := os.WriteFile(f, []byte(strings.ReplaceAll(text, "CORPUS", tinyCorpus(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func sweepPlan(t *testing.T, file string) (*Sweep, *pipeline.Plan) {
	t.Helper()
	sw, err := LoadSweep(file)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := BuildSweep(sw)
	if err != nil {
		t.Fatal(err)
	}
	return sw, plan
}

// A two-point sweep is each point's tokenize, train and evaluate stages,
// tokenize shared (the points differ in training only), and the study.
// Each point's stages have the keys of the plain profile the point is: the
// point at the profile's own sigma_min those of the plain profile, the
// other those of the profile with that --set. rope never reads sigma_min,
// so its models are one pair shared by both points (plain names).
func TestSweepExpansionKeys(t *testing.T) {
	file := writeSweep(t, `{"name": "two", "profile": "smoke", "set": ["corpus=CORPUS", "variants=rope,random-qk", "seeds=1,2"],
		"axes": [{"key": "sigma_min", "values": [0.2, 0.35]}]}`)
	sw, plan := sweepPlan(t, file)
	if plan.Profile != "sweep-two" {
		t.Errorf("plan name %q, want sweep-two", plan.Profile)
	}
	var want []string
	want = append(want, "tokenize")
	for _, s := range []string{"", "@seed2"} {
		want = append(want, "train/rope"+s, "evaluate/rope"+s)
	}
	for _, pt := range []string{"sigma_min=0.2", "sigma_min=0.35"} {
		for _, s := range []string{"", "@seed2"} {
			want = append(want, pt+"/train/random-qk"+s, pt+"/evaluate/random-qk"+s)
		}
	}
	want = append(want, "study")
	if got := stageNames(plan); !slices.Equal(got, want) {
		t.Fatalf("stages:\n%v\nwant\n%v", got, want)
	}
	sk := structKeys(t, plan)
	for _, pt := range []struct {
		label string
		set   []string
	}{{"sigma_min=0.35", nil}, {"sigma_min=0.2", []string{"sigma_min=0.2"}}} {
		prof, err := LoadProfileWith("smoke", Overrides{Set: append(slices.Clone(sw.Set), pt.set...)})
		if err != nil {
			t.Fatal(err)
		}
		pk := structKeys(t, buildOK(t, prof))
		for name, k := range pk {
			if name == "theory" || name == "kernelspeed" || name == "stepspeed" || name == "report" {
				continue
			}
			swName := pt.label + "/" + name
			if name == "tokenize" || strings.Contains(name, "/rope") {
				swName = name
			}
			if sk[swName] != k {
				t.Errorf("%s: key differs from the plain profile's %s (--set %v)", swName, name, pt.set)
			}
		}
	}
	st, _ := plan.Stage("study")
	cfg := st.Config.(study.Config)
	if len(st.Inputs) != 16 || len(cfg.Points) != 2 || !slices.Equal(cfg.Seeds, []uint64{1, 2}) || cfg.Points[1].Label != "sigma_min=0.35" {
		t.Errorf("study: %d inputs, points %+v, seeds %v", len(st.Inputs), cfg.Points, cfg.Seeds)
	}
}

// A second axis is a cartesian product; "with" keys move with their axis;
// a stage shared by some points only is named by what they have in common
// (the context changes the held-out split, so tokenize is one per context).
func TestSweepProductAndNames(t *testing.T) {
	file := writeSweep(t, `{"profile": "smoke", "set": ["corpus=CORPUS", "variants=rope"],
		"axes": [{"key": "context", "values": [16, 32]},
		         {"key": "d_model", "values": [32, 64], "with": {"heads": [2, 4], "d_hidden": [128, 256]}}]}`)
	sw, plan := sweepPlan(t, file)
	if sw.Name != "s" {
		t.Errorf("default name %q, want the file's base name s", sw.Name)
	}
	want := []string{"context=16/tokenize", "context=16,d_model=32/train/rope", "context=16,d_model=32/evaluate/rope",
		"context=16,d_model=64/train/rope", "context=16,d_model=64/evaluate/rope",
		"context=32/tokenize", "context=32,d_model=32/train/rope", "context=32,d_model=32/evaluate/rope",
		"context=32,d_model=64/train/rope", "context=32,d_model=64/evaluate/rope", "study"}
	if got := stageNames(plan); !slices.Equal(got, want) {
		t.Fatalf("stages:\n%v\nwant\n%v", got, want)
	}
	for _, s := range plan.Stages {
		if c, ok := s.Config.(modelspec.Config); ok {
			ctx, dm := 16, 32
			if strings.Contains(s.Name, "context=32") {
				ctx = 32
			}
			if strings.Contains(s.Name, "d_model=64") {
				dm = 64
			}
			if c.Context != ctx || c.DModel != dm || c.Heads != dm/16 || c.DHidden != 4*dm {
				t.Errorf("%s: context %d d_model %d heads %d d_hidden %d", s.Name, c.Context, c.DModel, c.Heads, c.DHidden)
			}
			if s.KeyName != "train/rope" {
				t.Errorf("%s: KeyName %q, want the profile's train/rope", s.Name, s.KeyName)
			}
		}
		if s.Kind == "evaluate" && s.Inputs[0].Stage.Name != strings.Split(s.Name, ",")[0]+"/tokenize" {
			t.Errorf("%s reads %s", s.Name, s.Inputs[0].Stage.Name)
		}
	}
}

// Bad sweep files are one-line errors naming the file and the fix; an
// unknown key lists the valid ones.
func TestSweepErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{`{"profile": "smoke", "axes": [{"key": "sigma_mn", "values": [0.1]}]}`, `axis 1: --set: unknown key "sigma_mn" (valid: `},
		{`{"profile": "smoke", "axes": [{"key": "sigma_min", "values": []}]}`, `axis sigma_min has no values: list at least one`},
		{`{"profile": "smoke", "axes": [{"key": "sigma_min"}]}`, `axis sigma_min has no values`},
		{`{"profile": "smoke", "axes": []}`, `no axes: give at least one`},
		{`{"profile": "smoke", "axis": [{"key": "sigma_min", "values": [0.1]}]}`, `unknown field "axis" (fields: name, profile, config, set, axes`},
		{`{"axes": [{"key": "sigma_min", "values": [0.1]}]}`, `no profile: name the base profile`},
		{`{"profile": "smoke", "axes": [{"key": "seed", "values": [1]}]}`, `key "seed" is ambiguous`},
		{`{"profile": "smoke", "axes": [{"key": "d_model", "values": [32, 64], "with": {"heads": [2]}}]}`, `with heads has 1 values for the axis's 2`},
		{`{"profile": "smoke", "axes": [{"key": "steps", "values": [1]}, {"key": "train.steps", "values": [2]}]}`, `axis 2 sets train.steps, which another axis sets too`},
		{`{"name": "a b", "profile": "smoke", "axes": [{"key": "steps", "values": [1]}]}`, `name "a b": use letters`},
	} {
		_, err := LoadSweep(writeSweep(t, tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "s.json") {
			t.Errorf("%s:\n got %v\nwant one line naming s.json with %q", tc.text, err, tc.want)
		}
	}
	// A value the key's type refuses, and an unknown profile: at build time, naming the point.
	for _, tc := range []struct{ text, want string }{
		{`{"profile": "smoke", "axes": [{"key": "steps", "values": ["many"]}]}`, `point steps=many: --set steps=many: train.steps wants an integer`},
		{`{"profile": "tiny", "axes": [{"key": "steps", "values": [1]}]}`, `unknown profile "tiny"`},
		{"{\"profile\": \"smoke\", \"config\": {\n \"windowz\": 3\n}, \"axes\": [{\"key\": \"steps\", \"values\": [1]}]}", `point steps=1: config {"windowz":3} is malformed: json: unknown field "windowz"`},
		{`{"profile": "smoke", "set": ["corpus=CORPUS"], "axes": [{"key": "seeds", "values": [[1], [1, 2]]}]}`, `every point needs the same seeds`},
	} {
		sw, err := LoadSweep(writeSweep(t, tc.text))
		if err == nil {
			_, err = BuildSweep(sw)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s:\n got %v\nwant one line with %q", tc.text, err, tc.want)
		}
	}
}

// The study files in sweeps/ load and expand (nothing runs): the gap study
// is sigma_min over 4 values, the scale study 3 sizes x 3 step counts, both
// random-qk and random-qkv over 2 seeds on the cpu-v1 profile (T = 128);
// scale-512 2 sizes x 2 step counts over 3 seeds on the cpu profile.
func TestStudyFiles(t *testing.T) {
	for _, tc := range []struct {
		file   string
		points int
		seeds  []uint64
	}{{"gap", 4, []uint64{1, 2}}, {"scale", 9, []uint64{1, 2}}, {"smoke", 2, []uint64{1, 2}}, {"scale-512", 4, []uint64{1, 2, 3}}} {
		sw, err := LoadSweep(filepath.Join("..", "sweeps", tc.file+".json"))
		if err != nil {
			t.Fatal(err)
		}
		sw.Set = append(sw.Set, "corpus="+tinyCorpus(t)) // expand without the default corpus
		plan, err := BuildSweep(sw)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := plan.Stage("study")
		cfg := st.Config.(study.Config)
		if len(cfg.Points) != tc.points || !slices.Equal(cfg.Seeds, tc.seeds) || len(cfg.Points[0].Runs) != 2*len(tc.seeds) {
			t.Errorf("%s: %d points (want %d), seeds %v, %d runs a point", tc.file, len(cfg.Points), tc.points, cfg.Seeds, len(cfg.Points[0].Runs))
		}
		if want := map[string]string{"gap": "cpu-v1", "scale": "cpu-v1", "smoke": "smoke", "scale-512": "cpu"}[tc.file]; cfg.Profile != want {
			t.Errorf("%s: profile %s, want %s", tc.file, cfg.Profile, want)
		}
	}
}

// The study's code salt: editing the study re-keys the study alone (never a
// point's training or evaluation), and the sweep expansion, in this
// unsalted package, re-keys nothing.
func TestStudySaltBoundary(t *testing.T) {
	_, plan := sweepPlan(t, writeSweep(t, `{"profile": "smoke", "set": ["corpus=CORPUS", "variants=rope"], "axes": [{"key": "steps", "values": [1, 2]}]}`))
	for _, s := range plan.Stages {
		files := saltFiles(t, s)
		if files["routebench/stages/sweep.go"] {
			t.Errorf("%s: the sweep expansion is in its salt", s.Name)
		}
		isStudy := s.Kind == study.Kind
		if files["routebench/stages/study/render.go"] != isStudy {
			t.Errorf("%s: editing the study re-keys it: %v, want %v", s.Name, !isStudy, isStudy)
		}
		if isStudy && !files["routebench/stages/report/seeds.go"] {
			t.Error("study: the seed statistics it uses (report) are not in its salt")
		}
	}
}

// A sweep's config object applies as a --config file would, and its set
// after it, as on the command line.
func TestSweepConfigThenSet(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want int
	}{{"", 3}, {`, "windows=2"`, 2}} {
		_, plan := sweepPlan(t, writeSweep(t, `{"profile": "smoke", "config": {"windows": 3, "train": {"steps": 5}},
			"set": ["corpus=CORPUS", "variants=rope"`+tc.set+`], "axes": [{"key": "sigma_min", "values": [0.1, 0.2]}]}`))
		for _, s := range plan.Stages {
			switch c := s.Config.(type) {
			case evaluate.Config:
				if c.Windows != tc.want {
					t.Errorf("set %q: %s evaluates %d windows, want %d", tc.set, s.Name, c.Windows, tc.want)
				}
			case modelspec.Config:
				if c.Steps != 5 {
					t.Errorf("%s: %d steps, want the config's 5", s.Name, c.Steps)
				}
			}
		}
	}
}

package slurm

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// Resources is what one job asks Slurm for. Empty fields are left to the
// site's own defaults (no flag is passed).
type Resources struct {
	CPUs      int      `json:"cpus,omitempty"`
	Mem       string   `json:"mem,omitempty"`  // sbatch --mem, e.g. 4G
	Time      string   `json:"time,omitempty"` // sbatch --time, e.g. 2:00:00
	Partition string   `json:"partition,omitempty"`
	Account   string   `json:"account,omitempty"`
	Gres      string   `json:"gres,omitempty"`  // e.g. gpu:1
	Extra     []string `json:"extra,omitempty"` // more sbatch arguments, one word each
}

// over returns r with o's set fields on top (Extra appends).
func (r Resources) over(o Resources) Resources {
	if o.CPUs != 0 {
		r.CPUs = o.CPUs
	}
	for _, p := range []struct {
		dst *string
		src string
	}{{&r.Mem, o.Mem}, {&r.Time, o.Time}, {&r.Partition, o.Partition}, {&r.Account, o.Account}, {&r.Gres, o.Gres}} {
		if p.src != "" {
			*p.dst = p.src
		}
	}
	r.Extra = append(append([]string(nil), r.Extra...), o.Extra...)
	return r
}

// Args are the sbatch flags for r.
func (r Resources) Args() []string {
	var a []string
	if r.CPUs > 0 {
		a = append(a, "--cpus-per-task="+strconv.Itoa(r.CPUs))
	}
	add := func(flag, v string) {
		if v != "" {
			a = append(a, flag+"="+v)
		}
	}
	add("--mem", r.Mem)
	add("--time", r.Time)
	add("--partition", r.Partition)
	add("--account", r.Account)
	add("--gres", r.Gres)
	return append(a, r.Extra...)
}

// Site is a cluster's defaults: a JSON file (--site FILE) such as
//
//	{"default": {"partition": "cpu", "account": "lab"},
//	 "kinds": {"train": {"partition": "gpu", "gres": "gpu:1", "time": "12:00:00"}},
//	 "binary": {"train": "/opt/routebench/bin/routebench-xla"},
//	 "max_requeue": 3, "signal_seconds": 90}
//
// "default" applies to every job, "kinds" on top of it for one stage kind
// (train, evaluate, tokenize, report, study, theory, ...); "binary" runs a
// kind with another routebench binary (the XLA build on GPU nodes).
type Site struct {
	Default       Resources            `json:"default"`
	Kinds         map[string]Resources `json:"kinds,omitempty"`
	Binary        map[string]string    `json:"binary,omitempty"`
	MaxRequeue    *int                 `json:"max_requeue,omitempty"`
	SignalSeconds int                  `json:"signal_seconds,omitempty"`
}

// LoadSite reads a site file.
func LoadSite(path string) (*Site, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("slurm site file: %w", err)
	}
	var s Site
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("slurm site file %s: %w (see docs/cluster.md for its fields)", path, err)
	}
	return &s, nil
}

// kindDefaults fit what each stage kind needs on the cpu profile; the time
// limits leave room on a slow node. Kinds not named get base.
var (
	base         = Resources{CPUs: 1, Mem: "2G", Time: "1:00:00"}
	kindDefaults = map[string]Resources{
		"train":       {CPUs: 2, Mem: "4G", Time: "8:00:00"},
		"evaluate":    {CPUs: 2, Mem: "4G", Time: "4:00:00"},
		"tokenize":    {CPUs: 1, Mem: "4G", Time: "1:00:00"},
		"stepspeed":   {CPUs: 2, Mem: "2G", Time: "1:00:00"},
		"kernelspeed": {CPUs: 1, Mem: "2G", Time: "1:00:00"},
	}
)

// For is the resources of one stage kind: the built-in default of the
// kind, a GPU for the GPU profile's train and evaluate jobs, then the
// site's default and the site's kind entry.
func (s *Site) For(kind string, gpu bool) Resources {
	r := base.over(kindDefaults[kind])
	if gpu && (kind == "train" || kind == "evaluate") {
		r.Gres = "gpu:1"
	}
	if s == nil {
		return r
	}
	r = r.over(s.Default)
	if k, ok := s.Kinds[kind]; ok {
		r = r.over(k)
	}
	return r
}

// maxRequeue is the site's bound, 3 by default (submitit's).
func (s *Site) maxRequeue() int {
	if s != nil && s.MaxRequeue != nil {
		return *s.MaxRequeue
	}
	return 3
}

func (s *Site) signalSeconds() int {
	if s != nil && s.SignalSeconds > 0 {
		return s.SignalSeconds
	}
	return 90
}

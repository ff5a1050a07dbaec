package slurm

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
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
	// MemRetry is the --mem of the one retry of a job that ran out of
	// memory (state OUT_OF_MEMORY): `submit` and `--wait` submit the stage
	// again with it (docs/cluster.md, section 5). "" means no retry.
	MemRetry string `json:"mem_retry,omitempty"`
}

// over returns r with o's set fields on top (Extra appends).
func (r Resources) over(o Resources) Resources {
	if o.CPUs != 0 {
		r.CPUs = o.CPUs
	}
	for _, p := range []struct {
		dst *string
		src string
	}{{&r.Mem, o.Mem}, {&r.Time, o.Time}, {&r.Partition, o.Partition}, {&r.Account, o.Account}, {&r.Gres, o.Gres}, {&r.MemRetry, o.MemRetry}} {
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
	// InputWaitSpec bounds how long a job waits for its inputs to show in
	// the store (NFS attribute caches; a Go duration, default 10m).
	InputWaitSpec string `json:"input_wait,omitempty"`
	// Setup are shell lines the job script runs before the stage, verbatim
	// (`module load go`, `source /shared/env.sh`): the site file is the
	// user's own, trusted as their shell is.
	Setup []string `json:"setup,omitempty"`
	// Wrap is put before the stage's command, one word each (quoted), to
	// run it in a container: ["apptainer", "exec", "/shared/rb.sif"].
	Wrap []string `json:"wrap,omitempty"`
	// Umask is set in the job before the stage runs; "0002" (the default)
	// keeps a store several users of one group share group-writable
	// (docs/cluster.md). "" in the file means the default; "keep" leaves
	// the job's own.
	Umask string `json:"umask,omitempty"`
	// A job's --time, where neither the site's default nor its kind entry
	// sets "time", is the plan's estimate of the stage on the job's CPUs
	// (routebench plan; calibrated by the store's own runs) times
	// TimeFactor (default 3), at least TimeFloor (default 30m) and at most
	// TimeCap (default 48h); Go durations.
	TimeFactor float64 `json:"time_factor,omitempty"`
	TimeFloor  string  `json:"time_floor,omitempty"`
	TimeCap    string  `json:"time_cap,omitempty"`
	// SubmitInterval is the least time between two sbatch calls (a Go
	// duration, default 100ms): clusters limit submit RPCs per user, and a
	// burst of sbatch calls is what makes a loaded slurmctld time out.
	SubmitInterval string `json:"submit_interval,omitempty"`
	// ArrayThrottle is the % of every job array's --array (at most that
	// many of its tasks run at once); 0 sets none.
	ArrayThrottle int `json:"array_throttle,omitempty"`
	// ArrayMax is the most tasks one job array gets (default 1000: Slurm's
	// default MaxArraySize is 1001, and a task index must be below it);
	// 1 submits one job per stage, as before job arrays.
	ArrayMax int `json:"array_max,omitempty"`
	// ArrayThrottleTotal caps the tasks of one stage kind that run at
	// once across all the jobs a submission splits that kind into
	// (array_throttle is per array: array_max and stages that do not line
	// up with their parent array give a kind several arrays, and as many
	// times the throttle). A kind's jobs then run one after another, each
	// waiting (afterany) for the one before, and each array is throttled
	// to at most this many; 0 sets none.
	ArrayThrottleTotal int `json:"array_throttle_total,omitempty"`
}

// arrayMax is array_max, 1000 by default.
func (s *Site) arrayMax() int {
	if s != nil && s.ArrayMax > 0 {
		return s.ArrayMax
	}
	return 1000
}

// arrayThrottle is the % of a job array's --array: array_throttle, or
// array_throttle_total where that is lower or the only one set.
func (s *Site) arrayThrottle() int {
	if s == nil {
		return 0
	}
	if t := s.ArrayThrottleTotal; t > 0 && (s.ArrayThrottle == 0 || t < s.ArrayThrottle) {
		return t
	}
	return s.ArrayThrottle
}

// chainsKinds says whether a kind's jobs of one submission run one after
// another (array_throttle_total).
func (s *Site) chainsKinds() bool { return s != nil && s.ArrayThrottleTotal > 0 }

// SubmitIntervalOrDefault is submit_interval, 100ms by default.
func (s *Site) SubmitIntervalOrDefault() time.Duration {
	if s != nil && s.SubmitInterval != "" {
		if d, err := time.ParseDuration(s.SubmitInterval); err == nil {
			return d
		}
	}
	return 100 * time.Millisecond
}

// TimeLimit is the --time of a stage of the given kind estimated at
// estimate, and false where the site sets the kind's time itself (or the
// estimate is unknown: the built-in default stays).
func (s *Site) TimeLimit(kind string, estimate time.Duration) (string, bool) {
	if estimate <= 0 || s.explicitTime(kind) {
		return "", false
	}
	factor, floor, limit := 3.0, 30*time.Minute, 48*time.Hour
	if s != nil {
		if s.TimeFactor > 0 {
			factor = s.TimeFactor
		}
		if d, err := time.ParseDuration(s.TimeFloor); err == nil && s.TimeFloor != "" {
			floor = d
		}
		if d, err := time.ParseDuration(s.TimeCap); err == nil && s.TimeCap != "" {
			limit = d
		}
	}
	d := time.Duration(float64(estimate) * factor)
	d = min(max(d, floor), limit)
	mins := int((d + time.Minute - 1) / time.Minute) // whole minutes, rounded up
	return fmt.Sprintf("%d:%02d:00", mins/60, mins%60), true
}

func (s *Site) explicitTime(kind string) bool {
	if s == nil {
		return false
	}
	return s.Default.Time != "" || s.Kinds[kind].Time != ""
}

// umask is the job's umask line value, "" for none.
func (s *Site) umask() string {
	switch {
	case s == nil || s.Umask == "":
		return "0002"
	case s.Umask == "keep":
		return ""
	}
	return s.Umask
}

// managedFlags are the sbatch flags routebench sets itself and relies on
// (job name = recipe, log paths, dependencies, requeue on the signal, the
// environment, the run directory); long form, then short form if any.
var managedFlags = [][2]string{{"--job-name", "-J"}, {"--output", "-o"}, {"--error", "-e"}, {"--open-mode", ""},
	{"--dependency", "-d"}, {"--kill-on-invalid-dep", ""}, {"--requeue", ""}, {"--no-requeue", ""}, {"--signal", ""},
	{"--chdir", "-D"}, {"--parsable", ""}, {"--export", ""}, {"--comment", ""}, {"--array", "-a"}, {"--wrap", ""}}

// ManagedFlag returns the managed flag an sbatch argument sets, or "".
func ManagedFlag(arg string) string {
	for _, f := range managedFlags {
		if arg == f[0] || strings.HasPrefix(arg, f[0]+"=") {
			return f[0]
		}
		if f[1] != "" && strings.HasPrefix(arg, f[1]) && !strings.HasPrefix(arg, "--") {
			return f[0]
		}
	}
	return ""
}

// checkExtra refuses extra sbatch arguments that would override a flag
// routebench manages: sbatch takes the last of two, so a site's
// --output or --dependency would silently break logs or chaining.
func checkExtra(stage string, extra []string) error {
	for _, a := range extra {
		if f := ManagedFlag(a); f != "" {
			return fmt.Errorf("slurm submit: the sbatch argument %q (site file \"extra\" or --sbatch-arg, for stage %s) sets %s, which routebench manages (docs/cluster.md, section 2); remove it", a, stage, f)
		}
	}
	return nil
}

// InputWait is the site's input_wait, 10 minutes by default.
func (s *Site) InputWait() time.Duration {
	if s != nil && s.InputWaitSpec != "" {
		if d, err := time.ParseDuration(s.InputWaitSpec); err == nil {
			return d
		}
	}
	return 10 * time.Minute
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
	for name, v := range map[string]string{"time_floor": s.TimeFloor, "time_cap": s.TimeCap, "submit_interval": s.SubmitInterval} {
		if d, err := time.ParseDuration(v); v != "" && (err != nil || d < 0) {
			return nil, fmt.Errorf("slurm site file %s: %s %q is not a duration such as \"30m\" or \"48h\"", path, name, v)
		}
	}
	if s.ArrayThrottle < 0 || s.ArrayMax < 0 || s.ArrayThrottleTotal < 0 {
		return nil, fmt.Errorf("slurm site file %s: array_throttle %d, array_throttle_total %d and array_max %d must not be negative", path, s.ArrayThrottle, s.ArrayThrottleTotal, s.ArrayMax)
	}
	for kind, r := range s.kindsAndDefault() {
		if r.MemRetry == "" {
			continue
		}
		if _, err := MemMiB(r.MemRetry); err != nil {
			return nil, fmt.Errorf("slurm site file %s: %s mem_retry %q: %w", path, kind, r.MemRetry, err)
		}
	}
	if s.TimeFactor < 0 {
		return nil, fmt.Errorf("slurm site file %s: time_factor %g must be positive", path, s.TimeFactor)
	}
	if s.InputWaitSpec != "" {
		if d, err := time.ParseDuration(s.InputWaitSpec); err != nil || d < 0 {
			return nil, fmt.Errorf("slurm site file %s: input_wait %q is not a duration such as \"10m\"", path, s.InputWaitSpec)
		}
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

func (s *Site) kindsAndDefault() map[string]Resources {
	m := map[string]Resources{"default": s.Default}
	for k, r := range s.Kinds {
		m["kind "+k] = r
	}
	return m
}

// MemMiB reads a memory size as sbatch --mem, squeue %m and sacct ReqMem
// write it ("4G", "4000M", "4096", "1.5T"; sacct may end it with n or c,
// per node or per CPU) in MiB.
func MemMiB(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "n"), "c")
	mult := 1.0
	if t != "" {
		switch t[len(t)-1] {
		case 'K', 'k':
			mult = 1.0 / 1024
		case 'M', 'm':
			mult = 1
		case 'G', 'g':
			mult = 1024
		case 'T', 't':
			mult = 1024 * 1024
		}
		if t[len(t)-1] > '9' {
			t = t[:len(t)-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("memory size %q is not a size such as 4G or 4000M", s)
	}
	return v * mult, nil
}

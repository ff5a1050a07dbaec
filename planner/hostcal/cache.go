package hostcal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"routebench/artifacts"
	"routebench/planner/cost"
)

// Format is the cache file's format; a file of another is stale. Bump it
// when the probe measures something else (cost.Reference then moves too).
const Format = 1

// MaxAge is how long a calibration is trusted: a host's speed drifts (the
// development VM's GEMM peak was 373-401 GFLOP/s one week and 246-278 the
// next), and a month-old probe costs more in a wrong estimate than a new
// one costs in seconds.
const MaxAge = 30 * 24 * time.Hour

// DirEnv names a cache directory to use instead of the user's (a lab can
// point every member at one group-writable directory); Off, as its value,
// turns the probe off: estimates use the built-in constants.
const (
	DirEnv = "ROUTEBENCH_CALIBRATION_DIR"
	Off    = "off"
)

// Entry is one host's calibration, as cached.
type Entry struct {
	Format   int         `json:"format"`
	Host     Host        `json:"host"`
	Speeds   cost.Speeds `json:"speeds"`
	OpenBLAS *Sgemm      `json:"openblas,omitempty"` // nil: not measured
	Measured time.Time   `json:"measured"`           // when Speeds were probed
	// Load is the 1-minute load average just before the probe (0 where
	// unknown): above the core count, other work slowed the figures.
	Load float64 `json:"load_average,omitempty"`
}

// Sgemm is OpenBLAS's 2-thread sgemm peak on bench/openblas's 2,048^3
// product, the best of its runs, and the OpenBLAS kernel that ran it.
type Sgemm struct {
	GFLOPs   float64   `json:"gflops"`
	Core     string    `json:"core"` // OPENBLAS_CORETYPE it ran under
	Measured time.Time `json:"measured"`
}

// Dir is where calibrations are cached: $ROUTEBENCH_CALIBRATION_DIR, else
// routebench/calibration under the user's cache directory
// ($XDG_CACHE_HOME or ~/.cache on Linux). Not the artifact store: plan
// opens the store read-only, and a calibration belongs to a machine, not
// to the results a store holds.
func Dir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("hostcal: no user cache directory for the host calibration (%w); set %s to a directory, or %s=%s to use the built-in constants", err, DirEnv, DirEnv, Off)
	}
	return filepath.Join(d, "routebench", "calibration"), nil
}

// Path is h's cache file in dir.
func Path(dir string, h Host) string { return filepath.Join(dir, h.Key()+".json") }

// errMissing is a cache miss with nothing to report.
var errMissing = errors.New("no calibration cached")

// Load reads h's calibration from dir as of now. A file that is not
// there is errMissing; one that cannot be trusted (unreadable JSON, another
// format, another host's figures, a figure that is not a positive number,
// older than MaxAge or from the future) is an error that says why, and is
// never returned as a figure.
func Load(dir string, h Host, now time.Time) (Entry, error) {
	p := Path(dir, h)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Entry{}, errMissing
	}
	if err != nil {
		return Entry{}, fmt.Errorf("hostcal: reading %s: %w", p, err)
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return Entry{}, fmt.Errorf("hostcal: %s is corrupt: %w", p, err)
	}
	switch {
	case e.Format != Format:
		return Entry{}, fmt.Errorf("hostcal: %s is stale: format %d, this routebench writes %d", p, e.Format, Format)
	case e.Host != h:
		return Entry{}, fmt.Errorf("hostcal: %s holds another host's figures (%s), not this one's (%s)", p, e.Host, h)
	case now.Sub(e.Measured) > MaxAge:
		return Entry{}, fmt.Errorf("hostcal: %s is stale: probed %s, more than %s ago", p, e.Measured.Format(time.DateTime), MaxAge)
	case e.Measured.After(now.Add(time.Hour)):
		return Entry{}, fmt.Errorf("hostcal: %s is corrupt: probed %s, in the future", p, e.Measured.Format(time.DateTime))
	}
	if err := e.Speeds.Check(); err != nil {
		return Entry{}, fmt.Errorf("hostcal: %s is corrupt: %w", p, err)
	}
	if e.OpenBLAS != nil && (!(e.OpenBLAS.GFLOPs > 0) || math.IsInf(e.OpenBLAS.GFLOPs, 0)) {
		return Entry{}, fmt.Errorf("hostcal: %s is corrupt: OpenBLAS peak %v GFLOP/s", p, e.OpenBLAS.GFLOPs)
	}
	return e, nil
}

// Save writes e into dir whole: a temporary file renamed into place, so
// that plans reading the same directory at once see the old file or the
// new one, never half of one. Files are world-readable (0644 under the
// caller's umask); a shared directory's group and setgid bit are the
// administrator's to set.
func Save(dir string, e Entry) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("hostcal: creating the calibration directory %s (set %s to another): %w", dir, DirEnv, err)
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return "", err
	}
	p := Path(dir, e.Host)
	if err := artifacts.WriteFileAtomic(p, append(b, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("hostcal: writing %s (set %s to a writable directory): %w", p, DirEnv, err)
	}
	return p, nil
}

// Options say how Calibrate finds a host's figures. Probe and ProbeOpenBLAS
// are the measurements (Probe and OpenBLASPeak; tests pass fakes).
type Options struct {
	Dir         string
	Host        Host
	Now         time.Time
	Recalibrate bool // probe even when a calibration is cached
	OpenBLAS    bool // also measure OpenBLAS's peak when the cache lacks it
	Probe       func() (cost.Speeds, error)
	// ProbeOpenBLAS measures OpenBLAS's 2-thread sgemm peak on h.
	ProbeOpenBLAS func(h Host) (Sgemm, error)
	// LoadAverage reads the host's load before a probe (LoadAverage; nil
	// records none).
	LoadAverage func() float64
	Log         io.Writer // why a cache was ignored, what was probed
}

// Result is a calibration and where it came from.
type Result struct {
	Entry
	Path   string // the cache file
	Cached bool   // Speeds read from Path, not probed now
}

// Calibrate returns o.Host's calibration: the cached one when it can be
// trusted, else a new probe's, which it caches. A cache it ignores is
// reported on o.Log with the reason; a cache it cannot write is reported
// and the probe's figures still used. An OpenBLAS probe that fails leaves
// the peak unmeasured and says why; only a failed Probe is an error.
func Calibrate(o Options) (Result, error) {
	p := Path(o.Dir, o.Host)
	e, err := Load(o.Dir, o.Host, o.Now)
	cached := err == nil && !o.Recalibrate
	if err != nil && !errors.Is(err, errMissing) {
		fmt.Fprintf(o.Log, "%v: ignored, probing again\n", err)
	}
	dirty, probed := false, false
	if !cached {
		fmt.Fprintf(o.Log, "calibrating cost estimates for this host (%s): a probe of a few seconds\n", o.Host)
		var load float64
		if o.LoadAverage != nil {
			load = o.LoadAverage()
		}
		s, err := o.Probe()
		if err != nil {
			return Result{}, fmt.Errorf("hostcal: probing %s: %w", o.Host, err)
		}
		prior := e.OpenBLAS // a recalibration keeps a valid cache's OpenBLAS figure unless it measures a new one
		e = Entry{Format: Format, Host: o.Host, Speeds: s, Measured: o.Now, OpenBLAS: prior, Load: load}
		dirty, probed = true, true
	}
	if o.OpenBLAS && (e.OpenBLAS == nil || o.Recalibrate) {
		fmt.Fprintf(o.Log, "measuring OpenBLAS's 2-thread sgemm peak (bench/openblas; the first run compiles it)\n")
		if sg, err := o.ProbeOpenBLAS(o.Host); err != nil {
			fmt.Fprintf(o.Log, "OpenBLAS's peak not measured: %v\n", err)
		} else {
			e.OpenBLAS, dirty = &sg, true
		}
	}
	if dirty {
		if _, err := Save(o.Dir, e); err != nil {
			fmt.Fprintf(o.Log, "%v: the calibration is used but not cached\n", err)
		}
	}
	return Result{Entry: e, Path: p, Cached: !probed}, nil
}

// LoadAverage is the 1-minute load average (/proc/loadavg), 0 where it
// cannot be read.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	if _, err := fmt.Sscan(string(b), &l); err != nil {
		return 0
	}
	return l
}

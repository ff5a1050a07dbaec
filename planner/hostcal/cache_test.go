package hostcal

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"routebench/planner/cost"
)

var (
	t0   = time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	avx  = Host{CPUModel: "AMD EPYC", Kernels: "avx512 assembly", Cores: 2, Code: "0123456789ab"}
	fake = cost.Speeds{GemmGFLOPs: 250, AttentionGFLOPs: 190, StepSec: 0.115}
)

// The cache key follows each field of the host: another CPU model, another
// kernel set (an AVX2 host can share an AVX-512 host's model name), another
// core count or other kernel code is another file; the same host, the
// same file.
func TestKeyFollowsHost(t *testing.T) {
	same := avx
	if avx.Key() != same.Key() {
		t.Fatalf("one host, two keys")
	}
	keys := map[string]string{"this host": avx.Key()}
	for name, h := range map[string]Host{
		"another CPU model":  {CPUModel: "Intel(R) Xeon(R) Platinum 8488C", Kernels: avx.Kernels, Cores: 2, Code: avx.Code},
		"another kernel set": {CPUModel: avx.CPUModel, Kernels: "avx2 assembly", Cores: 2, Code: avx.Code},
		"portable kernels":   {CPUModel: avx.CPUModel, Kernels: "portable Go", Cores: 2, Code: avx.Code},
		"more cores":         {CPUModel: avx.CPUModel, Kernels: avx.Kernels, Cores: 4, Code: avx.Code},
		"other kernel code":  {CPUModel: avx.CPUModel, Kernels: avx.Kernels, Cores: 2, Code: "ba9876543210"},
	} {
		for other, k := range keys {
			if h.Key() == k {
				t.Errorf("%s has the key of %s (%s)", name, other, k)
			}
		}
		keys[name] = h.Key()
	}
}

// counter is a fake probe that returns fixed figures and counts its calls.
type counter struct {
	n      int
	speeds cost.Speeds
}

func (c *counter) probe() (cost.Speeds, error) { c.n++; return c.speeds, nil }

func options(dir string, c *counter, log *bytes.Buffer) Options {
	return Options{Dir: dir, Host: avx, Now: t0, Probe: c.probe, Log: log,
		ProbeOpenBLAS: func(Host) (Sgemm, error) { return Sgemm{GFLOPs: 260, Core: "SkylakeX", Measured: t0}, nil }}
}

// The first plan probes and caches; the next reads the cache without
// probing; --recalibrate probes again.
func TestCalibrateCaches(t *testing.T) {
	dir := t.TempDir()
	c := &counter{speeds: fake}
	var log bytes.Buffer
	r, err := Calibrate(options(dir, c, &log))
	if err != nil || c.n != 1 || r.Cached || r.Speeds != fake {
		t.Fatalf("first calibration: %+v, %v, %d probes; want the probe's figures, 1 probe", r, err, c.n)
	}
	if fi, err := os.Stat(Path(dir, avx)); err != nil || fi.Mode().Perm()&0o044 != 0o044 {
		t.Errorf("cache file %s: %v, %v; want it written, readable by group and others", Path(dir, avx), fi, err)
	}
	r, err = Calibrate(options(dir, c, &log))
	if err != nil || c.n != 1 || !r.Cached || r.Speeds != fake {
		t.Errorf("second calibration: %+v, %v, %d probes; want the cached figures, no new probe", r, err, c.n)
	}
	o := options(dir, c, &log)
	o.Recalibrate = true
	if r, err = Calibrate(o); err != nil || c.n != 2 || r.Cached {
		t.Errorf("recalibration: %+v, %v, %d probes; want a new probe", r, err, c.n)
	}
	// OpenBLAS's peak is measured once asked for, then kept with the cache.
	o = options(dir, c, &log)
	o.OpenBLAS = true
	if r, err = Calibrate(o); err != nil || r.OpenBLAS == nil || r.OpenBLAS.GFLOPs != 260 || c.n != 2 || !r.Cached {
		t.Errorf("with OpenBLAS: %+v, %v, %d probes; want the peak added to the cached figures", r, err, c.n)
	}
	if r, err = Calibrate(options(dir, c, &log)); err != nil || r.OpenBLAS == nil || !r.Cached {
		t.Errorf("after OpenBLAS: %+v, %v; want the cached peak", r, err)
	}
}

// A cache that cannot be trusted is ignored with a message that says why,
// and the host is probed again (and the file replaced); a trusted one is
// used as is (the control: the same checks pass a good file).
func TestCalibrateIgnoresBadCache(t *testing.T) {
	good := Entry{Format: Format, Host: avx, Speeds: fake, Measured: t0.Add(-time.Hour)}
	cases := []struct {
		name string
		data func() []byte
		want string // in the message; "" for a file that must be used
	}{
		{"good", func() []byte { return js(good) }, ""},
		{"not JSON", func() []byte { return []byte(`{"format": 1, "speeds": {`) }, "is corrupt"},
		{"empty", func() []byte { return nil }, "is corrupt"},
		{"old format", func() []byte { e := good; e.Format = Format - 1; return js(e) }, "is stale: format"},
		{"too old", func() []byte { e := good; e.Measured = t0.Add(-MaxAge - time.Hour); return js(e) }, "is stale: probed"},
		{"from the future", func() []byte { e := good; e.Measured = t0.Add(48 * time.Hour); return js(e) }, "in the future"},
		{"another host's", func() []byte { e := good; e.Host.Kernels = "avx2 assembly"; return js(e) }, "another host's figures"},
		{"a zero figure", func() []byte { e := good; e.Speeds.StepSec = 0; return js(e) }, "step_seconds is 0"},
		{"a bad OpenBLAS peak", func() []byte { e := good; e.OpenBLAS = &Sgemm{GFLOPs: -3}; return js(e) }, "OpenBLAS peak -3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(Path(dir, avx), tc.data(), 0o644); err != nil {
				t.Fatal(err)
			}
			c := &counter{speeds: cost.Speeds{GemmGFLOPs: 100, AttentionGFLOPs: 90, StepSec: 0.3}}
			var log bytes.Buffer
			r, err := Calibrate(options(dir, c, &log))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if c.n != 0 || !r.Cached || r.Speeds != fake || log.Len() != 0 {
					t.Errorf("good cache: %d probes, %+v, log %q; want it used silently", c.n, r, log.String())
				}
				return
			}
			if c.n != 1 || r.Speeds != c.speeds || !strings.Contains(log.String(), tc.want) || !strings.Contains(log.String(), "ignored, probing again") {
				t.Errorf("%d probes, figures %+v, log %q; want a new probe and a message with %q", c.n, r.Speeds, log.String(), tc.want)
			}
			if e, err := Load(dir, avx, t0); err != nil || e.Speeds != c.speeds {
				t.Errorf("after the probe the cache holds %+v, %v; want the new figures", e, err)
			}
		})
	}
}

func js(e Entry) []byte {
	b, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	return b
}

// A failed probe is an error (the caller falls back to the built-in
// constants); a failed OpenBLAS probe only leaves the peak unmeasured; a
// cache that cannot be written leaves the figures in use.
func TestCalibrateFailures(t *testing.T) {
	var log bytes.Buffer
	o := options(t.TempDir(), &counter{}, &log)
	o.Probe = func() (cost.Speeds, error) { return cost.Speeds{}, errors.New("no kernels") }
	if _, err := Calibrate(o); err == nil || !strings.Contains(err.Error(), "no kernels") {
		t.Errorf("failed probe: %v, want its error", err)
	}
	o = options(t.TempDir(), &counter{speeds: fake}, &log)
	o.OpenBLAS = true
	o.ProbeOpenBLAS = func(Host) (Sgemm, error) { return Sgemm{}, errors.New("no libopenblas") }
	if r, err := Calibrate(o); err != nil || r.OpenBLAS != nil || !strings.Contains(log.String(), "no libopenblas") {
		t.Errorf("failed OpenBLAS probe: %+v, %v, log %q; want the figures without a peak, the reason logged", r, err, log.String())
	}
	blocker := t.TempDir() + "/file"
	os.WriteFile(blocker, nil, 0o644)
	log.Reset()
	o = options(blocker+"/sub", &counter{speeds: fake}, &log)
	if r, err := Calibrate(o); err != nil || r.Speeds != fake || !strings.Contains(log.String(), "used but not cached") {
		t.Errorf("unwritable cache: %+v, %v, log %q; want the figures used and the failure said", r, err, log.String())
	}
}

// parsePeak reads the OpenBLAS 2-thread line's GFLOP/s from go test's
// output, the best of its runs, and refuses output without one.
func TestParsePeak(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkSgemm/impl=openblas-2t/peak/2048x2048x2048-2         	      10	  46512345 ns/op	       369.4 GFLOP/s	         0.09 cpu-s/op
BenchmarkSgemm/impl=openblas-2t/peak/2048x2048x2048-2         	      10	  45012345 ns/op	       381.7 GFLOP/s	         0.09 cpu-s/op
BenchmarkSgemm/impl=native-2t/peak/2048x2048x2048-2           	      10	  40012345 ns/op	       429.0 GFLOP/s	         0.09 cpu-s/op
PASS
`)
	if g, err := parsePeak(out); err != nil || g != 381.7 {
		t.Errorf("parsePeak = %v, %v; want 381.7 (the best openblas-2t line, not the native one)", g, err)
	}
	if _, err := parsePeak([]byte("--- SKIP: built without -tags openblas\nPASS\n")); err == nil {
		t.Errorf("parsePeak accepted output without a peak line")
	}
}

// This host is keyed by the code the probe runs, hashed from the binary's
// own source: the kernelspeed and stepspeed stages' salt.
func TestCurrentNamesCode(t *testing.T) {
	h := Current()
	if len(h.Code) != 12 || h.Code == "unknown" || h.CPUModel == "" || h.Kernels == "" || h.Cores < 1 {
		t.Errorf("Current() = %+v: want the CPU model, kernel set, cores and 12 hex digits of the probed code's salt", h)
	}
}

// A probe records the load average read just before it, and the cache
// keeps it.
func TestCalibrateRecordsLoad(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	o := options(dir, &counter{speeds: fake}, &log)
	o.LoadAverage = func() float64 { return 7.5 }
	if r, err := Calibrate(o); err != nil || r.Load != 7.5 {
		t.Fatalf("probe: %+v, %v; want load 7.5 recorded", r, err)
	}
	if e, err := Load(dir, avx, t0); err != nil || e.Load != 7.5 {
		t.Errorf("cached: %+v, %v; want load 7.5 kept", e, err)
	}
}

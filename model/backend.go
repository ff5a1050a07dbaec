package model

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
)

// DefaultGoBackendOptions avoid simplego v0.26.0's executor deadlock
// (DotGeneral/Erf wait for a worker slot while holding one; four at once
// hang at 0% CPU): unlimited parallelism never blocks, and the large
// DotGeneral kernel measured ~18% faster than the automatic choice.
const DefaultGoBackendOptions = "parallelism=-1,dotgeneral_large"

// XLABackend builds an XLA backend from its configuration (the text after
// "xla:"). It is nil in this package: the GPU issue sets it from a file
// built without -tags noxla. Requests for XLA fail clearly while it is nil.
var XLABackend func(config string) (backends.Backend, error)

var (
	backendMu    sync.Mutex
	backendCache = map[string]backends.Backend{}
)

// NewBackend returns the backend named by Config.Backend, created once per
// process and name: "go" (simplego with DefaultGoBackendOptions; under the
// race detector with sequential op scheduling), "go:<opts>"
// (simplego with exactly those options), or "xla[:config]" (needs XLABackend).
func NewBackend(name string) (b backends.Backend, err error) {
	installMatmulVJP()
	if name == "" {
		name = "go"
	}
	backendMu.Lock()
	defer backendMu.Unlock()
	if b, ok := backendCache[name]; ok {
		return b, nil
	}
	kind, opts, _ := strings.Cut(name, ":")
	switch kind {
	case simplego.BackendName:
		if opts == "" {
			opts = DefaultGoBackendOptions
			if raceBuild {
				// simplego v0.26.0's parallel op scheduler reads its use
				// counters without the lock (exec.go:430) and reuses buffers
				// in place; the race detector flags it. It is benign on amd64
				// (TestExecutorsAgreeAtCPUProfile: bit-identical to the
				// sequential executor), but -race runs must stay clean.
				opts = "ops_sequential," + opts
			}
		}
		err = catch("creating simplego backend", func() (err error) {
			withoutStdout(func() { b, err = simplego.New(opts) })
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("model: backend %q: %w", name, err)
		}
	case "xla", "cuda", "stablehlo":
		if XLABackend == nil {
			return nil, fmt.Errorf("model: backend %q needs XLA, which this binary does not have "+
				"(built with -tags noxla, or no XLA hook registered); use backend \"go\" or a GPU build", name)
		}
		b, err = XLABackend(opts)
		if err != nil {
			return nil, fmt.Errorf("model: backend %q: %w", name, err)
		}
	default:
		return nil, fmt.Errorf("model: unknown backend %q (want \"go\", \"go:<simplego options>\" or \"xla[:config]\")", name)
	}
	backendCache[name] = b
	return b, nil
}

// withoutStdout runs fn with os.Stdout pointed at the null device:
// simplego.New prints "parallelism set to" on stdout, which would corrupt a
// CLI's output (and this package's Example). It runs once per process and
// backend name, under backendMu; a write by another goroutine in that
// instant would be lost, not misplaced.
func withoutStdout(fn func()) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		fn()
		return
	}
	saved := os.Stdout
	os.Stdout = null
	defer func() {
		os.Stdout = saved
		null.Close()
	}()
	fn()
}

// catch turns a gomlx panic inside fn into an error naming what was being done.
func catch(what string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = fmt.Errorf("model: %s: gomlx: %w", what, e)
			} else {
				err = fmt.Errorf("model: %s: gomlx: %v", what, r)
			}
		}
	}()
	return fn()
}

package hostcal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"routebench/model/native"
)

// openblasBench is bench/openblas's benchmark of OpenBLAS on 2 threads on
// its 2,048^3 product (the yardstick make bench-speed divides by).
const openblasBench = "^BenchmarkSgemm$/^impl=openblas-2t/^peak"

// OpenBLASPeak measures OpenBLAS's 2-thread sgemm peak on h with `go test
// -tags noxla,openblas` over bench/openblas in the routebench source tree
// that holds dir (OpenBLAS is a benchmark reference: no routebench binary
// links it, so this needs the source, the Go toolchain and Debian's
// libopenblas-dev, which make bench-speed installs). OpenBLAS picks its
// kernel as make bench-speed has it pick: SkylakeX (its AVX-512 sgemm) where
// the AVX-512 kernels run, Haswell (AVX2) where the AVX2 ones do, its own
// detection otherwise; BENCH_OPENBLAS_CORETYPE overrides, as there.
func OpenBLASPeak(dir string) func(h Host) (Sgemm, error) {
	return func(h Host) (Sgemm, error) {
		root, err := moduleRoot(dir)
		if err != nil {
			return Sgemm{}, err
		}
		core := os.Getenv("BENCH_OPENBLAS_CORETYPE")
		if core == "" {
			core = map[string]string{"avx512": "SkylakeX", "avx2": "Haswell"}[native.KernelSet()]
		}
		cmd := exec.Command("go", "test", "-tags", "noxla,openblas", "-run", "^$", "-bench", openblasBench, "-benchtime", "0.3s", "-count", "3", "./bench/openblas/")
		cmd.Dir = root
		// Empty: OpenBLAS's own detection, not a choice inherited from the environment.
		cmd.Env = append(os.Environ(), "OPENBLAS_CORETYPE="+core)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return Sgemm{}, fmt.Errorf("go test -tags noxla,openblas ./bench/openblas/ in %s: %w (is libopenblas-dev installed? make bench-speed installs it):\n%s", root, err, tail(out, 800))
		}
		g, err := parsePeak(out)
		if err != nil {
			return Sgemm{}, err
		}
		if core == "" {
			core = "OpenBLAS's own detection"
		}
		return Sgemm{GFLOPs: g, Core: core, Measured: time.Now().UTC()}, nil
	}
}

// parsePeak is the best GFLOP/s of the benchmark's lines in go test's
// output (benchfmt: name, iterations, then value-unit pairs).
func parsePeak(out []byte) (float64, error) {
	best := 0.0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkSgemm/impl=openblas-2t/peak/") {
			continue
		}
		for i := 3; i < len(f); i += 2 {
			if f[i] == "GFLOP/s" {
				if v, err := strconv.ParseFloat(f[i-1], 64); err == nil && v > best {
					best = v
				}
			}
		}
	}
	if best <= 0 {
		return 0, fmt.Errorf("hostcal: no OpenBLAS 2-thread peak line (BenchmarkSgemm/impl=openblas-2t/peak/... GFLOP/s) in the benchmark's output:\n%s", tail(out, 800))
	}
	return best, nil
}

// moduleRoot is the routebench checkout that holds dir: the first parent
// with routebench's go.mod and bench/openblas.
func moduleRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		mod, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(mod), []byte("module routebench")) {
			if _, err := os.Stat(filepath.Join(d, "bench", "openblas")); err == nil {
				return d, nil
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("hostcal: OpenBLAS's peak is measured from the routebench source tree (bench/openblas), and this directory is not inside one: run plan --openblas from the checkout")
		}
		d = parent
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

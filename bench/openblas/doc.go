// Package openblas times OpenBLAS's cblas_sgemm beside the native GEMM
// (model/native) on the same shapes in one process, so that "fraction of
// the sgemm peak" is one run's ratio. OpenBLAS is a benchmark reference
// only: its files build only with -tags openblas (and cgo, -lopenblas from
// Debian's libopenblas-dev), no product package may import this one, and
// without the tag only the native half of the benchmark builds.
//
//	go test -tags noxla,openblas -run '^$' -bench . -count 3 ./bench/openblas/
//
// (`make bench-speed` installs the library and runs it with the rest of
// issue 22's figures; docs/benchmarks.md.)
package openblas

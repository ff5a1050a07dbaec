//go:build tools

// Package deps pins every third-party package the project builds on, so
// that go.mod and go.sum are complete before any package imports them.
// It is never compiled into the binary (build tag "tools").
package deps

import (
	_ "github.com/apache/arrow-go/v18/arrow/ipc"
	_ "github.com/apache/arrow-go/v18/arrow/memory"
	_ "github.com/apache/arrow-go/v18/parquet/file"
	_ "github.com/apache/arrow-go/v18/parquet/pqarrow"
	_ "github.com/dustin/go-humanize"
	_ "github.com/gomlx/gomlx/backends/simplego"
	_ "github.com/gomlx/gomlx/pkg/core/graph"
	_ "github.com/gomlx/gomlx/pkg/ml/context"
	_ "github.com/gomlx/gomlx/pkg/ml/train/optimizers"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/tiktoken-go/tokenizer"
	_ "golang.org/x/perf/benchfmt"
	_ "golang.org/x/perf/benchmath"
	_ "golang.org/x/perf/benchproc"
	_ "golang.org/x/term"
	_ "gonum.org/v1/gonum/mat"
	_ "gonum.org/v1/plot"
	_ "gonum.org/v1/plot/plotter"
	_ "gonum.org/v1/plot/vg"
)

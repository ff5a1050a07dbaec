package report

import (
	"routebench/pipeline"
	"routebench/stages/evaluate"
)

type evalResult = evaluate.Result

// Files the report reads from the theory and bench artifacts.
const (
	TheoryMarkdown = "theory.md"
	BenchMarkdown  = "bench.md"
)

// readBench returns the bench stage's markdown table, if the plan has one.
func readBench(rc *pipeline.RunContext) (string, error) {
	art, ok := rc.Inputs[benchInput]
	if !ok {
		return "", nil
	}
	b, err := art.ReadFile(BenchMarkdown)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

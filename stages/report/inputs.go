package report

import (
	"routebench/pipeline"
	"routebench/stages/evaluate"
)

type evalResult = evaluate.Result

// Files the report reads from the theory and measurement artifacts. The
// report does not import the measuring stages (their code would salt its
// key); stages.TestReportReadsProducersFiles checks the names agree.
const (
	TheoryMarkdown      = "theory.md"
	KernelSpeedMarkdown = "kernelspeed.md" // kernelspeed.MarkdownFile
	StepSpeedMarkdown   = "stepspeed.md"   // stepspeed.MarkdownFile
)

// readMarkdown returns a measurement stage's markdown table (kernelspeed.md of
// the bench input, stepspeed.md of stepspeed's), or "" where the plan
// has no such input.
func readMarkdown(rc *pipeline.RunContext, input, file string) (string, error) {
	art, ok := rc.Inputs[input]
	if !ok {
		return "", nil
	}
	b, err := art.ReadFile(file)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

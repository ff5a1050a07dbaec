package shards

import (
	"fmt"

	"routebench/pipeline"
)

// Input is the input name under which the stages that read shards
// (train, evaluate) declare the tokenize stage.
const Input = "shards"

// OpenInput memory-maps the tokenize artifact that a running stage declared
// as its input named input (normally Input). This is the one way a
// stage reads shards: it passes every file of the artifact but the runner's
// own to Open, which recognises shards and manifest by content (artifact
// files are content-addressed blobs) and checks they form whole splits.
func OpenInput(rc *pipeline.RunContext, input string) (*Dataset, error) {
	art, err := rc.Input(input)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, name := range art.Names() {
		if name == pipeline.RunInfoFile {
			continue
		}
		p, err := art.Path(name)
		if err != nil {
			return nil, fmt.Errorf("stage %s: input %q: %w", rc.Stage.Name, input, err)
		}
		paths = append(paths, p)
	}
	ds, err := Open(paths)
	if err != nil {
		return nil, fmt.Errorf("stage %s: opening the shards of input %q: %w", rc.Stage.Name, input, err)
	}
	return ds, nil
}

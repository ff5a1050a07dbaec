// Package train is the pipeline stage that trains one position-encoding
// variant on the tokenize stage's shards (through package model) and
// commits its weights, loss curve and speed figures.
//
// It reads only its declared input (the shards artifact) and writes only
// into its output directory; checkpoints go to the stage's work dir so a
// killed run resumes (model.Train guarantees bit-identical final weights).
package train

import (
	"fmt"

	"routebench/model"
	"routebench/pipeline"
	"routebench/spec"
	"routebench/stages/tokenize"
)

// Kind is the stage kind; stage names are "train/<variant>".
const Kind = "train"

// ShardsInput is the input name of the tokenize artifact.
const ShardsInput = "shards"

// Stage returns the training stage of one variant.
func Stage(cfg spec.Config, shards *pipeline.Stage) *pipeline.Stage {
	return &pipeline.Stage{
		Name:     Kind + "/" + cfg.Variant,
		Kind:     Kind,
		Config:   cfg,
		Inputs:   []pipeline.Input{{Name: ShardsInput, Stage: shards}},
		Code:     []string{"routebench/stages/train"},
		Volatile: []string{spec.SpeedFile},
		Run: func(rc *pipeline.RunContext) error {
			ds, err := OpenShards(rc)
			if err != nil {
				return err
			}
			defer ds.Close()
			if info := ds.Info(); info.VocabSize != cfg.Vocab {
				return fmt.Errorf("train/%s: shards have vocabulary %d, config says %d (tokenizer mismatch)", cfg.Variant, info.VocabSize, cfg.Vocab)
			}
			return model.Train(rc.Context, cfg, ds, rc.WorkDir, rc.OutDir, rc.Progress)
		},
	}
}

// OpenShards memory-maps the shards input of a running stage.
func OpenShards(rc *pipeline.RunContext) (*tokenize.Dataset, error) {
	art, err := rc.Input(ShardsInput)
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
			return nil, err
		}
		paths = append(paths, p)
	}
	ds, err := tokenize.Open(paths)
	if err != nil {
		return nil, fmt.Errorf("stage %s: opening shards: %w", rc.Stage.Name, err)
	}
	return ds, nil
}

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
	"routebench/modelspec"
	"routebench/pipeline"
	"routebench/stages/tokenize/shards"
)

// Kind is the stage kind; stage names are "train/<variant>".
const Kind = "train"

// Stage returns the training stage of one variant. Its config is
// normalized first (modelspec.Config.Normalized): the key hashes only what
// the variant reads, and train.json records the same config.
func Stage(cfg modelspec.Config, tokenized *pipeline.Stage) *pipeline.Stage {
	cfg = cfg.Normalized()
	return &pipeline.Stage{
		Name:     Kind + "/" + cfg.Variant,
		Kind:     Kind,
		Config:   cfg,
		Inputs:   []pipeline.Input{{Name: shards.Input, Stage: tokenized}},
		Code:     []string{"routebench/stages/train"},
		Volatile: []string{modelspec.SpeedFile},
		Run: func(rc *pipeline.RunContext) error {
			ds, err := shards.OpenInput(rc, shards.Input)
			if err != nil {
				return err
			}
			defer ds.Close()
			if info := ds.Info(); info.VocabSize != cfg.Vocab {
				return fmt.Errorf("train/%s: shards have vocabulary %d, config says %d (tokenizer mismatch)", cfg.Variant, info.VocabSize, cfg.Vocab)
			}
			return model.Train(rc.Context, cfg, ds, rc.WorkDir, rc.OutDir, func(p model.Progress) { report(rc, p) })
		},
	}
}

// report passes a training report on to the pipeline: a step's figures
// as the stream log's fields (pipeline.Figures), a report without any as
// plain progress.
func report(rc *pipeline.RunContext, p model.Progress) {
	done, total := int64(p.Step), int64(p.Steps)
	if p.Figures == nil || rc.Measured == nil {
		rc.Progress(done, total, p.Note)
		return
	}
	f := p.Figures
	rc.Measured(done, total, p.Note, pipeline.Figures{Step: done, Loss: f.Loss, HeldOutLoss: f.HeldOutLoss, TokensPerSec: f.TokensPerSec, ETASec: f.ETASec})
}

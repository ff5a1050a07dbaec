package model

// Progress is what Train reports: after every step, with that step's
// figures, and before the first step when it resumes from a checkpoint or
// refuses one, with a note and no figures. The pipeline writes the
// figures into the stream log as fields of their own (pipeline.Figures),
// so that a script reads them without parsing Note.
type Progress struct {
	Step, Steps int    // steps done, of how many
	Note        string // the same, in words, for a person
	// Figures is nil on a report that follows no step.
	Figures *StepFigures
}

// StepFigures are what one training step measured.
type StepFigures struct {
	Loss float64 // the step's training loss (train.json's train_loss entry)
	// HeldOutLoss is the held-out loss measured after the step
	// (train.json's eval point); nil at steps that measure none.
	HeldOutLoss  *float64
	TokensPerSec float64 // Batch x Context / the step's wall time
	// ETASec is the steps left times the median step time so far (the
	// first step of a process, which compiles, counts only when it is the
	// only one); unrounded.
	ETASec float64
}

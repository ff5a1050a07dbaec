package modelspec

// Output file names in outDir. weights.rbw and train.json are pure
// functions of (config, data): identical bytes for identical inputs, also
// across kills and resumes. speed.json holds the measurements of this
// machine and run (volatile).
const (
	WeightsFile = "weights.rbw"
	ReportFile  = "train.json"
	SpeedFile   = "speed.json"
)

// TrainReport is train.json.
type TrainReport struct {
	Config       Config    `json:"config"`
	Arch         Arch      `json:"arch"`
	VariantDoc   string    `json:"variant_doc"`
	Params       int       `json:"params"` // trained values
	AngleSigmas  []float64 `json:"angle_sigmas,omitempty"`
	SpectralGaps []float64 `json:"spectral_gaps,omitempty"` // 1 - exp(-sigma^2/2) per pair

	TrainLoss    []float64   `json:"train_loss"` // every step
	GradNorm     []float64   `json:"grad_norm"`  // every step, before clipping
	Eval         []EvalPoint `json:"eval"`       // held-out loss every EvalEvery steps and at the end
	FinalLoss    float64     `json:"final_train_loss"`
	FlopsPerStep float64     `json:"flops_per_step"` // matmul FLOPs, forward + backward (FlopsPerStep)
}

// SpeedReport is speed.json: how fast this machine trained, over all
// processes that contributed steps (step times survive resumes). Numbers
// only, so readers may decode it as map[string]float64; variant and backend
// are in train.json's config.
type SpeedReport struct {
	ResumedFrom    int     `json:"resumed_from"`      // step the last process started at
	CompileSeconds float64 `json:"compile_seconds"`   // median first step of a process, including graph compilation
	StepSeconds    float64 `json:"step_seconds"`      // median of the other steps (wall)
	MinStepSeconds float64 `json:"min_step_seconds"`  // fastest step: the least-disturbed figure on a shared machine
	TimedSteps     int     `json:"timed_steps"`       // steps behind the medians
	TokensPerSec   float64 `json:"tokens_per_second"` // Batch*Context / StepSeconds
	GFlopsPerSec   float64 `json:"gflops_per_second"` // FlopsPerStep / StepSeconds
	PeakRSSBytes   int64   `json:"peak_rss_bytes"`    // process high-water mark (VmHWM), if readable
}

// EvalPoint is one held-out loss measurement.
type EvalPoint struct {
	Step int     `json:"step"`
	Loss float64 `json:"loss"`
}

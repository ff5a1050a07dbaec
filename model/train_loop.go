package model

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"routebench/internal/procstat"
	"routebench/modelspec"
)

// Data is the token source of a run. Both methods must be pure functions of
// their arguments: resume depends on it.
type Data interface {
	// TrainBatch returns batch windows of T input tokens and their
	// next-token targets, flattened row-major [batch*T].
	TrainBatch(seed uint64, step, batch, T int) (inputs, targets []int32, err error)
	// EvalWindows returns n held-out windows of L+1 tokens (inputs plus the
	// shifted targets).
	EvalWindows(seed uint64, L, n int) ([][]int32, error)
}

// Train's output files and their types (modelspec.WeightsFile, modelspec.ReportFile,
// modelspec.SpeedFile; modelspec.TrainReport, modelspec.SpeedReport) are defined in package
// modelspec, so that the stages reading them do not link gomlx.
type (
	TrainReport = modelspec.TrainReport
	SpeedReport = modelspec.SpeedReport
	EvalPoint   = modelspec.EvalPoint
)

// File names, as modelspec names them.
const (
	WeightsFile = modelspec.WeightsFile
	ReportFile  = modelspec.ReportFile
	SpeedFile   = modelspec.SpeedFile
)

// Train trains cfg.Variant on data and writes outDir/weights.rbw and
// outDir/train.json. Checkpoints go to workDir every CheckpointEvery steps
// and at the end; a rerun with the same config resumes from the last one and
// ends with bit-identical weights. progress (may be nil) is called after
// every step, with the step's figures, and before the first step when a
// checkpoint is resumed or refused, without. On any error nothing is
// written to outDir.
func Train(ctx context.Context, cfg Config, data Data, workDir, outDir string, progress func(Progress)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("model: training %s/%s: unexpected panic: %v", cfg.Profile, cfg.Variant, r)
		}
	}()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if data == nil {
		return fmt.Errorf("model: training %s: no data source", cfg.Variant)
	}
	if progress == nil {
		progress = func(Progress) {}
	}
	for _, d := range []string{workDir, outDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("model: training %s: %w", cfg.Variant, err)
		}
	}
	// Temp files of writes a kill interrupted (never valid, see atomicWrite).
	for _, pat := range []string{
		filepath.Join(workDir, "."+filepath.Base(checkpointPath(workDir, cfg))+".tmp-*"),
		filepath.Join(outDir, "."+WeightsFile+".tmp-*"),
		filepath.Join(outDir, "."+ReportFile+".tmp-*"),
		filepath.Join(outDir, "."+SpeedFile+".tmp-*"),
	} {
		stale, _ := filepath.Glob(pat)
		for _, f := range stale {
			os.Remove(f)
		}
	}
	tr, err := newEngine(cfg)
	if err != nil {
		return err
	}
	defer tr.close()
	specs := paramSpecs(cfg)

	hist := history{}
	start := 0
	if ck, note := readCheckpoint(workDir, cfg, specs); ck != nil {
		tr.setState(ck.params, ck.m, ck.v)
		start, hist = ck.header.Step, ck.header.History
		progress(Progress{Step: start, Steps: cfg.Steps, Note: fmt.Sprintf("%s: resumed from step %d", cfg.Variant, start)})
	} else {
		if note != "" {
			progress(Progress{Steps: cfg.Steps, Note: cfg.Variant + ": " + note})
		}
		zeros := make([][]float32, len(specs))
		for i, s := range specs {
			zeros[i] = make([]float32, size(s.Shape))
		}
		tr.setState(initParams(cfg, specs), zeros, zeros)
	}

	var evalWin [][]int32
	if cfg.EvalEvery > 0 && cfg.EvalBatches > 0 {
		if evalWin, err = data.EvalWindows(cfg.Seed, cfg.Context, cfg.EvalBatches*cfg.Batch); err != nil {
			return fmt.Errorf("model: training %s: held-out windows: %w", cfg.Variant, err)
		}
		for i, w := range evalWin {
			if len(w) != cfg.Context+1 {
				return fmt.Errorf("model: training %s: held-out window %d has %d tokens, want %d", cfg.Variant, i, len(w), cfg.Context+1)
			}
		}
	}

	tokensPerStep := float64(cfg.Batch * cfg.Context)
	for s := start; s < cfg.Steps; s++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("model: training %s stopped at step %d of %d (rerun resumes from the last checkpoint): %w", cfg.Variant, s, cfg.Steps, err)
		}
		tok, tgt, err := data.TrainBatch(cfg.Seed, s, cfg.Batch, cfg.Context)
		if err != nil {
			return fmt.Errorf("model: training %s: batch for step %d: %w", cfg.Variant, s, err)
		}
		t0 := time.Now()
		loss, gnorm, err := tr.runStep(s, tok, tgt)
		if err != nil {
			return err
		}
		dt := time.Since(t0).Seconds()
		if s == start {
			hist.CompileTime = append(hist.CompileTime, dt)
		} else {
			hist.StepTime = append(hist.StepTime, dt)
		}
		if !finite(loss) || !finite(gnorm) {
			return fmt.Errorf("model: training %s/%s diverged at step %d: loss %v, gradient norm %v; nothing written to %s (lower lr %g or clip %g)",
				cfg.Profile, cfg.Variant, s, loss, gnorm, outDir, cfg.LR, cfg.Clip)
		}
		hist.TrainLoss = append(hist.TrainLoss, float64(loss))
		hist.GradNorm = append(hist.GradNorm, float64(gnorm))
		done := s + 1
		fig := StepFigures{Loss: float64(loss), TokensPerSec: tokensPerStep / dt}
		note := ""
		if evalWin != nil && (done%cfg.EvalEvery == 0 || done == cfg.Steps) {
			el, err := tr.evalLoss(evalWin)
			if err != nil {
				return err
			}
			if !finite(float32(el)) {
				return fmt.Errorf("model: training %s/%s: non-finite held-out loss at step %d; nothing written", cfg.Profile, cfg.Variant, done)
			}
			hist.Eval = append(hist.Eval, EvalPoint{Step: done, Loss: el})
			fig.HeldOutLoss = &el
			note = fmt.Sprintf(", held-out %.4f", el)
		}
		if (cfg.CheckpointEvery > 0 && done%cfg.CheckpointEvery == 0) || done == cfg.Steps {
			if err := saveCheckpoint(tr, cfg, specs, workDir, done, hist); err != nil {
				return err
			}
		}
		med := median(hist.StepTime)
		if med == 0 {
			med = dt
		}
		fig.ETASec = float64(cfg.Steps-done) * med
		eta := time.Duration(fig.ETASec * float64(time.Second)).Round(time.Second)
		progress(Progress{Step: done, Steps: cfg.Steps, Figures: &fig, Note: fmt.Sprintf("%s step %d/%d loss %.4f%s, %.0f tokens/s, ETA %s",
			cfg.Variant, done, cfg.Steps, loss, note, fig.TokensPerSec, eta)})
	}
	return export(tr, cfg, specs, outDir, start, hist)
}

func finite(x float32) bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func saveCheckpoint(tr engine, c Config, specs []paramSpec, dir string, step int, hist history) error {
	params, m, v, err := tr.state()
	if err != nil {
		return err
	}
	h := checkpointHeader{Key: checkpointKey(c), Step: step, History: hist}
	for _, s := range specs {
		h.Tensors = append(h.Tensors, checkpointEntr{Name: s.Name, Shape: s.Shape})
	}
	return writeCheckpoint(checkpointPath(dir, c), &checkpoint{header: h, params: params, m: m, v: v})
}

func export(tr engine, c Config, specs []paramSpec, outDir string, start int, hist history) error {
	v, _ := modelspec.LookupVariant(c.Variant)
	params, _, _, err := tr.state()
	if err != nil {
		return err
	}
	set, err := exportSet(c, specs, params)
	if err != nil {
		return err
	}
	rep := TrainReport{Config: c, Arch: set.Arch, VariantDoc: v.Doc, TrainLoss: hist.TrainLoss,
		GradNorm: hist.GradNorm, Eval: hist.Eval, FlopsPerStep: FlopsPerStep(c)}
	if rep.Eval == nil {
		rep.Eval = []EvalPoint{}
	}
	for _, s := range specs {
		rep.Params += size(s.Shape)
	}
	if n := len(hist.TrainLoss); n > 0 {
		rep.FinalLoss = hist.TrainLoss[n-1]
	}
	if v.DrawsRandomAngles() {
		rep.AngleSigmas = modelspec.AngleSigmas(c.DModel/c.Heads/2, c.SigmaMax, c.SigmaMin)
		rep.SpectralGaps = modelspec.SpectralGaps(rep.AngleSigmas)
	}
	sp := SpeedReport{ResumedFrom: start, CompileSeconds: median(hist.CompileTime), StepSeconds: median(hist.StepTime),
		PeakRSSBytes: procstat.PeakRSS(), TimedSteps: len(hist.StepTime)}
	if len(hist.StepTime) > 0 {
		sp.MinStepSeconds = slices.Min(hist.StepTime)
	}
	if sp.StepSeconds > 0 {
		sp.TokensPerSec = float64(c.Batch*c.Context) / sp.StepSeconds
		sp.GFlopsPerSec = rep.FlopsPerStep / sp.StepSeconds / 1e9
	}
	var wb bytes.Buffer
	if err := set.Write(&wb); err != nil {
		return err
	}
	rj, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("model: encoding %s: %w", ReportFile, err)
	}
	sj, err := json.MarshalIndent(sp, "", "  ")
	if err != nil {
		return fmt.Errorf("model: encoding %s: %w", SpeedFile, err)
	}
	// Weights last: a reader that finds weights.rbw also finds the reports.
	if err := atomicWrite(filepath.Join(outDir, SpeedFile), append(sj, '\n')); err != nil {
		return err
	}
	if err := atomicWrite(filepath.Join(outDir, ReportFile), append(rj, '\n')); err != nil {
		return err
	}
	return atomicWrite(filepath.Join(outDir, WeightsFile), wb.Bytes())
}

// FlopsPerStep counts the matmul FLOPs of one training step (forward plus
// backward = 3x forward): projections, MLP, unembedding, full (unmasked)
// attention products, rotation swaps and, for learned variants, the
// triangular prefix sum (and learned-proj-qkv's angle projections). Elementwise work is not counted.
func FlopsPerStep(c Config) float64 {
	v, _ := modelspec.LookupVariant(c.Variant)
	B, T, D, F, V, H := float64(c.Batch), float64(c.Context), float64(c.DModel), float64(c.DHidden), float64(c.Vocab), float64(c.Heads)
	d := D / H
	perLayer := 2*B*T*D*D*4 + 2*B*T*D*F*2 + 2*B*H*T*T*d*2
	switch {
	case v.Rotation != modelspec.RotationNone && v.ValueRot:
		perLayer += 2 * B * T * D * d * 4 // q, k, v, output
	case v.Rotation != modelspec.RotationNone:
		perLayer += 2 * B * T * D * d * 2
	}
	fwd := float64(c.Layers)*perLayer + 2*B*T*D*V
	if v.Learned {
		fwd += 2 * B * T * T * H * d / 2
	}
	if v.AngleProj { // per block: theta = a W_ang and its triangular prefix sum
		fwd += float64(c.Layers) * (2*B*T*D*H*d/2 + 2*B*T*T*H*d/2)
	}
	return 3 * fwd
}

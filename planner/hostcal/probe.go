package hostcal

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"routebench/model"
	"routebench/model/nativeeval"
	"routebench/planner"
	"routebench/planner/cost"
	"routebench/stages/kernelspeed"
)

// Probe rounds: each round times the GEMM, the attention and a training
// step once, so that a load that comes and goes on a shared machine falls
// on all three alike. maxRounds of them on a fast host (a round is about
// 0.25 s at the reference's speed, 1-2 s on the development VM at load
// average 10); on a slow one it stops once probeBudget has passed, after
// one round at least (the portable kernels on the development VM at load
// average 10: a 34 s GEMM, a 49 s step). No separate warm-up: the first
// round's GEMM is the one best-of discards, its attention and step the
// ones a median of several leaves out, and on a host too slow for several
// rounds a warm-up would double a probe of minutes.
const (
	minRounds   = 1
	maxRounds   = 7
	probeBudget = 5 * time.Second
)

// probeLength is the attention length timed: kernelspeed's longer row,
// where the evaluation's long windows spend their time.
const probeLength = 4096

// Probe measures this host's Speeds through the kernels the stages run:
// kernelspeed's PeakProduct (best of the rounds, as kernelspeed takes its
// peak), the rope attention kernelspeed times at 4,096 and a rope training
// step at the cpu profile's shape (the stepspeed stage's StepTimer),
// medians of the rounds, as those stages report them.
func Probe() (cost.Speeds, error) {
	gemm, gemmFlops := kernelspeed.PeakProduct()
	att, qkv, out, err := ropeAttention()
	if err != nil {
		return cost.Speeds{}, err
	}
	cfg, err := planner.TrainConfig("cpu", "rope")
	if err != nil {
		return cost.Speeds{}, fmt.Errorf("hostcal: the cpu profile's rope config: %w", err)
	}
	step, err := model.NewStepTimer(cfg) // takes one untimed step
	if err != nil {
		return cost.Speeds{}, fmt.Errorf("hostcal: building the probe's training step: %w", err)
	}
	defer step.Close()
	var gemms, atts, steps []float64
	start := time.Now()
	for r := 0; r < maxRounds && (r < minRounds || time.Since(start) < probeBudget); r++ {
		t0 := time.Now()
		gemm()
		gemms = append(gemms, gemmFlops/time.Since(t0).Seconds()/1e9)
		t0 = time.Now()
		att.Run(out, qkv, 0)
		atts = append(atts, att.FLOPs()/time.Since(t0).Seconds()/1e9)
		wall, _, err := step.Time(1)
		if err != nil {
			return cost.Speeds{}, fmt.Errorf("hostcal: timing the probe's training step: %w", err)
		}
		steps = append(steps, wall)
	}
	s := cost.Speeds{GemmGFLOPs: slices.Max(gemms), AttentionGFLOPs: median(atts), StepSec: median(steps)}
	return s, s.Check()
}

// ropeAttention is kernelspeed's rope problem at probeLength: 4 heads of
// 32 (the cpu profile's), base 10,000, seeded operands.
func ropeAttention() (*nativeeval.Attention, []float32, []float32, error) {
	ks := kernelspeed.NewConfig([]int{probeLength}, 1)
	att, err := nativeeval.NewAttention(nativeeval.AttentionSpec{L: probeLength, Heads: ks.Heads, DHead: ks.DHead, Rotation: "rope", RopeBase: 10000})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("hostcal: the probe's attention problem: %w", err)
	}
	r := rand.New(rand.NewPCG(probeLength, 17))
	D := ks.Heads * ks.DHead
	qkv := make([]float32, probeLength*3*D)
	for i := range qkv {
		qkv[i] = float32(r.NormFloat64())
	}
	return att, qkv, make([]float32, probeLength*D), nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

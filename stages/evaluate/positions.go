package evaluate

import (
	"fmt"
	"math"
)

// BinsPerOctave is the position curve's resolution: bin edges at
// floor(2^(k/4)), k = 0, 1, ... (duplicates dropped, so the first bins
// are single positions), the last bin ending at L.
const BinsPerOctave = 4

// PositionCurve is the loss against position at the primary protocol's
// longest length (under DesignPrefixes it holds every shorter length's
// positions too): each window's mean loss in log-spaced position bins,
// kept per window so that the report can form intervals over seeds and
// windows. It costs a sum over the losses the length already computed.
type PositionCurve struct {
	L int `json:"length"`
	// Bins are [Start, End) in positions p = 1 .. L, where position p is
	// the p-th scored prediction, made from the p tokens up to it (its
	// loss is the window's loss[p-1]).
	Bins []PositionBin `json:"bins"`
	// WindowLoss[w][b] is window w's mean loss (nats) over bin b.
	WindowLoss [][]float64 `json:"window_loss"`
}

// PositionBin is positions [Start, End), 1-based.
type PositionBin struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// PositionBins are the log-spaced bins covering positions 1 .. L:
// BinsPerOctave per octave, edges floor(2^(k/BinsPerOctave)) below L;
// the last bin ends at L+1 (so at L = 2^n it is [2^(n-1/4), L]).
func PositionBins(L int) []PositionBin {
	var out []PositionBin
	start := 1
	for k := 1; start <= L; k++ {
		end := int(math.Floor(math.Pow(2, float64(k)/BinsPerOctave) + 1e-9))
		if end <= start {
			continue
		}
		if end >= L {
			end = L + 1 // position L joins the bin before it, not a bin of its own
		}
		out = append(out, PositionBin{Start: start, End: end})
		start = end
	}
	return out
}

// positionCurve bins every window's per-position losses (each of length L).
func positionCurve(losses [][]float64, L int) (*PositionCurve, error) {
	pc := &PositionCurve{L: L, Bins: PositionBins(L)}
	for w, loss := range losses {
		if len(loss) != L {
			return nil, fmt.Errorf("position curve at length %d: window %d has %d losses", L, w, len(loss))
		}
		row := make([]float64, len(pc.Bins))
		for b, bin := range pc.Bins {
			var s float64
			for _, v := range loss[bin.Start-1 : bin.End-1] {
				s += v
			}
			row[b] = s / float64(bin.End-bin.Start)
		}
		pc.WindowLoss = append(pc.WindowLoss, row)
	}
	return pc, nil
}

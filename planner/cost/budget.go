package cost

// The cpu profile's cold-run budget (issue 51), normalised to a reference
// host so that a slow host does not cut a registered claim, seed or window
// and a fast one does not hide a profile that grew: cold wall time x (the
// host's OpenBLAS 2-thread sgemm peak / BudgetPeakGFLOPs) <= BudgetSeconds.
const (
	BudgetProfile    = "cpu"
	BudgetPeakGFLOPs = 400.0
	BudgetSeconds    = 90 * 60.0
)

// Normalised is sec, a cold wall time on a host whose sgemm peak is
// peakGFLOPs, on the budget's reference host: sec x peak / 400. A host
// twice as fast runs the same work in half the time, so the product is the
// host's work in reference-host seconds.
func Normalised(sec, peakGFLOPs float64) float64 { return sec * peakGFLOPs / BudgetPeakGFLOPs }

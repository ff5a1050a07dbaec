// Package stats is the one home of the evaluation statistics that the
// evaluate stage, the report and the studies use: the confidence level,
// the Student-t interval over evaluation windows (and Welch's for independent sets), the crossed seeds x windows interval, Holm's adjustment, power by simulation, the intervals over
// training seeds (arithmetic and log-scale Student-t), and the paired
// comparisons of two models (or two lengths) on the same windows.
//
// It is pure arithmetic on float64 slices: it must never read artifacts,
// know a variant or a claim, or draw randomness from anything but the seed
// it is given (every interval is deterministic for a fixed seed). The
// evaluate stage imports it, so an edit here re-keys every evaluation:
// keep report-only helpers (formatting, claims) out of it.
//
// docs/statistics.md says which ratio the claims use and why.
package stats

// Confidence is the coverage of every interval the project reports: the
// window bootstrap's, the seed t-intervals', and the paired comparisons'.
const Confidence = 0.95

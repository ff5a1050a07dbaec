// Package stats is the one home of the evaluation statistics that the
// evaluate stage, the report and the studies use: the confidence level;
// Student-t intervals over evaluation windows (WindowT), Welch's for two
// independent window sets, and the crossed seeds x windows interval
// (CrossedT); paired comparisons of two models or two lengths on the same
// windows; t intervals over training seeds (arithmetic and log-scale);
// and the power figures that say how many seeds or windows would settle a
// claim. Subpackage decide holds the claims' tests and Holm's adjustment.
//
// It is pure arithmetic on float64 slices: it must never read artifacts,
// know a variant or a claim, or draw randomness but from a seed it is given
// (every interval is exact arithmetic and takes none; decide's power
// simulation takes its seed explicitly). The evaluate stage imports it, so a
// change to its code re-keys every evaluation (a comment does not:
// pipeline/canon.go); keep report-only helpers (formatting, claims) out of
// it.
//
// docs/statistics.md says which ratio the claims use and why.
package stats

// Confidence is the coverage of every interval the project reports: the
// window, seed and crossed t intervals and the paired comparisons'.
const Confidence = 0.95

// Package theory runs the paper's theory checks as seeded Monte Carlo
// experiments, independent of any training: the stage "theory" of the
// pipeline. It reads nothing from the artifact store and writes only into
// the output directory it is given.
//
// The paper ("Why Do Accumulated Transformations Extrapolate?") argues from
// a stylized model in which the attention logit between a query at position
// i and a source at j is q^T P_{j->i} k with P_{j->i} = M_i ... M_{j+1}, a
// product of per-token orthogonal steps. Four claims are checked:
//
//  1. mixing (mixing.go): with a spectral gap ||E[M]||_op < 1 the transport
//     decorrelates after a window n* that depends on the gap, not on the
//     context length L. Steps: block SO(2) with i.i.d. angles, exp of a
//     scaled random skew-symmetric matrix, Householder reflections. Contexts
//     of 1K, 8K and 64K tokens are simulated as real sequences (the transport
//     is accumulated from token 1, as a model would) and queries are placed
//     throughout the context.
//  2. concentration (concentration.go): for far routes q^T P k follows the
//     Haar limit and its tails sit below Levy's bound 2exp(-d t^2/2)
//     (orthogonal group) and Hoeffding's bound 2exp(-d t^2/4) (block SO(2),
//     flat query), for d = 16..256.
//  3. farmass (farmass.go): with |logit| <= lambda, K near and M far sources
//     the far softmax mass is at least M/(M + K e^{2 lambda}); an ALiBi
//     distance penalty keeps it bounded instead.
//  4. incoherence (incoherence.go): far values sharing a background
//     component add coherently (energy ~ M^2) without value transport and
//     with cancelling phases (energy ~ M, bounded per source) with it.
//
// Every check states its sample sizes, reports standard errors, and turns
// its claim into PASS/FAIL criteria that allow for Monte Carlo error with a
// Bonferroni-corrected z (family-wise error Alpha) and that fail when fed a
// step without spectral gap or a wrong bound (see the tests).
//
// Usage:
//
//	sum, err := theory.Run(ctx, theory.CPUConfig(), outDir, progress)
//
// API: Config (with SmokeConfig, CPUConfig and Validate) holds every sample
// size, dimension and seed; Run validates it, runs all checks on
// Config.Workers goroutines and returns a Summary. A FAIL verdict is a
// result (Summary.Pass, Summary.Checks[i].Verdict), never an error; errors
// mean the stage could not run (bad config, cancelled context, I/O).
//
// Run writes into its output directory, atomically file by file:
//
//	theory.json              Summary: every check, PASS/FAIL, criteria with their numbers, sample sizes, config
//	theory.md                markdown tables and criteria to embed in RESULTS.md
//	mixing_contexts.png      check 1: correlation vs route length, per family, for every context length
//	mixing_opnorm.png        check 1: ||E[P_n]||_op vs ||E[M]||^n
//	concentration_tails.png  check 2: tail probabilities vs d t^2 with Levy / Hoeffding bounds
//	farmass.png              check 3: far mass vs M with the lower bound, and ALiBi
//	incoherence.png          check 4: far-value energy vs M with and without value transport
//
// Modelling decisions where the paper is silent: Householder steps are pure
// reflections (beta = 2), the orthogonal case the theory covers (PaTH's
// beta in (0,2) gives contractions, outside the orthogonal-group argument);
// check 4 aggregates far values with uniform weights (far mass spread
// evenly); queries and keys share one content vector, so the correlation
// measures how much of a perfect match a route preserves. Output is a pure function of
// the Config: the same seed gives byte-identical files regardless of the
// number of workers, because every task draws from its own seeded stream and
// results are reduced in a fixed order.
//
// The package must never read training artifacts, the network or the
// clock into its outputs (timing goes only to the progress callback).
package theory

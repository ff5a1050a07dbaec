// Package theory runs the paper's theory checks as seeded Monte Carlo
// experiments, independent of any training: the stage "theory" of the
// pipeline. It reads nothing from the artifact store and writes only into
// the output directory it is given.
//
// The paper ("Why Do Accumulated Transformations Extrapolate?") argues from
// a stylized model in which the attention logit between a query at position
// i and a source at j is q^T P_{j->i} k with P_{j->i} = M_i ... M_{j+1}, a
// product of per-token orthogonal steps. Five checks:
//
//  1. mixing (mixing.go): with a spectral gap ||E[M]||_op < 1 the transport
//     decorrelates after a window n* that depends on the gap, not on the
//     context length L, and the products' law converges (far-route second
//     moment against the limit's). Steps: block SO(2) with i.i.d. angles, exp
//     of a scaled random skew-symmetric matrix, Householder reflections,
//     simulated in contexts of 1K, 8K and 64K tokens (the transport is
//     accumulated from token 1, as a model would).
//  2. concentration (concentration.go): far-route scores follow the Haar
//     limit (KS) and their tails sit below Levy's and Hoeffding's bounds where
//     those bounds are below 1.
//  3. farmass (farmass.go): transport lowers the far softmax mass against
//     untransported logits, and it still tends to 1 at the rate
//     M/(M + K e^Delta); ALiBi keeps it below rotation-only.
//  4. incoherence (incoherence.go): far values sharing a background add
//     coherently (energy ~ M^2) without value transport and cancel (~ M)
//     with it, for SO(2) and Householder transport.
//  5. path (path.go): PaTH's steps I - beta w w^T, beta in (0, 2]: the
//     product's norm decay and its directional decorrelation apart.
//
// Criteria are empirical (they can fail for a law that violates the claim;
// only these count as evidence) or identities (true by construction: unit
// tests of the code). Each check runs controls (controls.go and each
// check's file), laws that violate its claim and must FAIL a named
// empirical criterion; a control that passes fails the check. Empirical
// tolerances split the family-wise error Alpha over one comparison per
// criterion and cell, never per route length. docs/theory.md lists every
// criterion, control and tolerance.
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
// (check 5 has no plot; its table is in theory.md.)
//
// Modelling decisions where the paper is silent: the Householder family of
// checks 1, 2 and 4 uses pure reflections (beta = 2), the orthogonal case
// the theory covers; check 5 takes PaTH's beta in (0, 2), whose steps
// contract; check 4 aggregates far values with uniform weights (far mass spread
// evenly); queries and keys share one content vector, so the correlation
// measures how much of a perfect match a route preserves. Output is a pure function of
// the Config: the same seed gives byte-identical files regardless of the
// number of workers, because every task draws from its own seeded stream and
// results are reduced in a fixed order.
//
// The package must never read training artifacts, the network or the
// clock into its outputs (timing goes only to the progress callback).
package theory

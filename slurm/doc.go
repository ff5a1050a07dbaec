// Package slurm runs a routebench plan on a Slurm cluster: one sbatch job
// per stage that is not in the shared store, chained by afterok
// dependencies, each job running `routebench run STAGE` against that store.
//
// It knows nothing of stages' contents: the caller (cmd/routebench) gives it
// Nodes (a stage's name, kind, recipe, parents and whether it is cached) and
// it turns them into sbatch calls, reads squeue (and sacct where accounting
// exists) back into states, and cancels jobs left pending behind a failed
// parent. Job names are built from each stage's recipe (see Recipe), so a
// second submission finds the first one's jobs with one squeue call.
package slurm

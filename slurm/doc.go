// Package slurm runs a routebench plan on a Slurm cluster: a job for each
// stage that is not in the shared store, independent stages of one kind
// in one job array (a task per stage), chained by aftercorr and afterok
// dependencies, each job or task running `routebench run STAGE --only`
// against that store.
//
// It knows nothing of stages' contents: the caller (cmd/routebench) gives it
// Nodes (a stage's name, kind, recipe, parents and whether it is cached) and
// it turns them into sbatch calls, reads squeue (and sacct where accounting
// exists) back into states, and cancels jobs left pending behind a failed
// parent; a job that ran out of memory is submitted again with the
// site's mem_retry. Job names are built from each stage's recipe (see
// Recipe), or of an array's members' recipes (with a file per stage
// naming its array and task), so a second submission finds the first
// one's jobs with one squeue call.
package slurm

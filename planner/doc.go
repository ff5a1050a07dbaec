// Package planner turns a profile (smoke, cpu, paper, or one built from
// --config/--set/--corpus/--eval-corpus) or a sweep file into a plan: the
// stages, their configs and their inputs, for the pipeline to run. The stage
// implementations live in stages/* (tokenize, train, evaluate, theory,
// kernelspeed, stepspeed, report, study); this package only wires them, so
// no stage's code salt includes it, and it must never compute a result.
package planner

// Package gomlxeval holds the gomlx evaluators of exported weights: Forward
// (full attention, O(H L^2) memory; the reference side of the native
// evaluator's cross-checks) and LogProbsBlockwise (queries in chunks, the
// candidate long-context evaluator on XLA). Both build their graphs from
// model.Network, the same pieces training uses.
//
// It is its own package so that editing an evaluator re-keys no training
// stage: the train stage's code salt covers package model, not this one.
// It must never be imported by model or by any stage that trains.
package gomlxeval

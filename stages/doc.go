// Package stages assembles routebench's stages into the plan of each
// profile (smoke, cpu, paper). The stage implementations live in the
// subpackages (tokenize, train, evaluate, theory, report); this package only
// wires them, so no stage's code salt includes it.
package stages

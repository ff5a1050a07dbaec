// Package artifacts is routebench's content-addressed artifact store, shaped
// like Go's build cache.
//
// Two kinds of ID: an ActionID hashes everything that determines a stage's
// output (stage, config, input output-IDs, code salt, format version); an
// OutputID is the sha256 of the bytes a stage produced. Blobs are stored by
// OutputID, so identical outputs are shared; an index entry maps an ActionID
// to the named files of its artifact.
//
// What the store must never do: serve bytes that differ from what was
// written. Every read verifies size and hash; anything wrong (missing blob,
// truncated or flipped file, bad index entry) is a Miss with a reason, never
// a panic and never a result. Writes go to a temp file in the same
// directory, are fsynced, renamed into place, and the directory fsynced;
// the index entry is written last, so a process killed at any instant leaves
// nothing that reads as valid. Several processes may share one store: the
// worst case is duplicated work, never corruption (gc takes an exclusive
// flock that writers share, so it cannot delete a blob a writer is about to
// index).
//
// Layout under the store root:
//
//	blobs/ab/<output-id>        artifact bytes, read-only
//	index/ab/<action-id>        index entry (text, self-checksummed)
//	work/<action-id>/           a running stage's output and scratch dirs
//	tmp/                        temp files not yet renamed
//	locks/                      flock files (never PID files)
package artifacts
